"""The local kube-apiserver's gates: the flags they become, and bad ones refused naming the
option before anything starts. No control plane runs here."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import crdkit.testing.envtest.control_plane
from crdkit.cli import main
from crdkit.testing.envtest.binaries import Binaries
from crdkit.testing.envtest.control_plane import ControlPlane
from crdkit.testing.envtest.gates import WORKLOAD_API, ApiserverGates


def test_no_gates_keep_the_service_account_admission_off_and_nothing_else() -> None:
    assert ApiserverGates().argv() == ["--disable-admission-plugins=ServiceAccount"]


def test_the_workload_api_is_the_flags_the_issue_found() -> None:
    assert WORKLOAD_API.argv() == [
        "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true",
        "--runtime-config=scheduling.k8s.io/v1beta1=true",
        "--disable-admission-plugins=ServiceAccount,PodGroupProtection",
    ]


def test_a_control_plane_merges_its_own_gates_into_the_workload_api() -> None:
    plane = ControlPlane(workload_api=True, feature_gates={"GenericWorkload": False, "Foo": True})
    assert plane.gates.feature_gates == {
        "GenericWorkload": False,
        "TopologyAwareWorkloadScheduling": True,
        "Foo": True,
    }
    assert plane.gates.disabled_admission_plugins == ("PodGroupProtection",)
    assert ControlPlane().gates == ApiserverGates()


@pytest.mark.parametrize(
    ("gates", "field"),
    [
        ({"feature_gates": {"Bad-Gate": True}}, "feature_gates"),
        ({"feature_gates": {"Gate": "yes"}}, "feature_gates"),
        ({"runtime_config": {"scheduling.k8s.io/v1beta1": "tr,ue"}}, "runtime_config"),
        ({"disabled_admission_plugins": ("a,b",)}, "disabled_admission_plugins"),
    ],
)
def test_a_bad_gate_is_refused_naming_its_option(gates: dict[str, object], field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}: "):
        ControlPlane(**gates)  # type: ignore[arg-type]


@pytest.fixture
def no_start(monkeypatch: pytest.MonkeyPatch) -> None:
    def started() -> Binaries:
        raise AssertionError("a control plane was started")

    monkeypatch.setattr(crdkit.testing.envtest.control_plane, "find_binaries", started)


@pytest.mark.usefixtures("no_start")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--feature-gates", "GenericWorkload"], "--feature-gates: expected KEY=VALUE"),
        (["--feature-gates", "GenericWorkload=on"], "--feature-gates: GenericWorkload=on"),
        (["--runtime-config", "=true"], "--runtime-config: expected KEY=VALUE"),
        (["--runtime-config", "a b=true"], "--runtime-config: expected group/version"),
    ],
)
@pytest.mark.parametrize("command", [["up"], ["run", "--", "true"]])
def test_envtest_refuses_bad_gates_before_starting(
    command: list[str], args: list[str], message: str
) -> None:
    where = command[:1] + args + command[1:]
    result = CliRunner().invoke(main, ["envtest", *where])
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stderr.splitlines() == [result.stderr.strip()]
    assert message in result.stderr
