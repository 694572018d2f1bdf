"""The Queue API (``scheduling.crdkit.io/v1alpha1``): the checked-in CRD is what the generator
makes of the models, the models' defaults and round trip, the milli-unit helpers the scheduler
reads quota with, and the Python twins of the CRD's rules, each naming its field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

import crdkit.resources
from crdkit.cli import main
from crdkit.resources import (
    Queue,
    QueueFlavor,
    QueueQuota,
    QueueResource,
    QueueSpec,
    QueueStatus,
    resource_info,
)
from crdkit.resources.queues import MAX_MILLI

ROOT = Path(__file__).resolve().parents[3]
CRDS = ROOT / "python" / "crdkit" / "scheduling" / "queues" / "crds"
CRD_FILE = CRDS / "scheduling.crdkit.io_queues.yaml"


def team_a(**spec: Any) -> dict[str, Any]:
    """The issue's example queue, with ``spec`` fields replaced."""
    return {
        "apiVersion": "scheduling.crdkit.io/v1alpha1",
        "kind": "Queue",
        "metadata": {"name": "team-a"},
        "spec": {
            "parent": "org",
            "weight": 1,
            "flavors": [
                {
                    "name": "h100",
                    "nodeLabels": {"gpu.example.com/model": "h100"},
                    "resources": [
                        {
                            "name": "nvidia.com/gpu",
                            "nominal": 64,
                            "borrowingLimit": 32,
                            "lendingLimit": 16,
                        },
                        {"name": "memory", "nominal": "512Gi"},
                    ],
                }
            ],
            "maxRunSeconds": 3600,
            **spec,
        },
    }


def gpu(**fields: Any) -> dict[str, Any]:
    return {"name": "nvidia.com/gpu", "nominal": 8, **fields}


def one_flavor(*resources: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": "h100", "resources": list(resources)}]


# -- the CRD ------------------------------------------------------------------------------------


def test_regenerating_the_crd_gives_the_checked_in_file_byte_for_byte(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["gen-crd", "crdkit.resources.queues", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [CRD_FILE.name]
    assert (tmp_path / CRD_FILE.name).read_bytes() == CRD_FILE.read_bytes()


def test_gen_crd_check_passes_on_the_shipped_folder() -> None:
    # --check also fails on a pydantic validator with no CEL twin: every rule here has one.
    result = CliRunner().invoke(main, ["gen-crd", "crdkit.resources.queues", "--check", str(CRDS)])
    assert result.exit_code == 0, result.output


def test_the_queue_is_cluster_scoped_in_its_group() -> None:
    info = resource_info(Queue)
    assert (info.api_version, info.kind, info.plural, info.namespaced) == (
        "scheduling.crdkit.io/v1alpha1",
        "Queue",
        "queues",
        False,
    )
    assert info.path(name="team-a") == "/apis/scheduling.crdkit.io/v1alpha1/queues/team-a"


def test_the_models_are_exported_from_the_resources_face() -> None:
    for name in ("Queue", "QueueSpec", "QueueStatus", "QueueFlavor", "QueueResource"):
        assert name in crdkit.resources.__all__
        assert getattr(crdkit.resources, name).__module__ == "crdkit.resources.queues"


# -- defaults and round trip --------------------------------------------------------------------


def test_an_empty_spec_has_the_crds_defaults() -> None:
    spec = Queue.model_validate({"metadata": {"name": "org"}, "spec": {}}).spec
    assert spec.parent is None
    assert spec.weight == 1
    assert spec.flavors == []
    assert spec.preemption.within_queue == "LowerPriority"
    assert spec.preemption.fair_share is False
    assert spec.max_run_seconds is None
    assert spec.enforce_max_run_time is False


def test_quantities_are_kept_as_text_whether_written_as_numbers_or_strings() -> None:
    queue = Queue.model_validate(team_a())
    gpus, memory = queue.spec.flavors[0].resources
    assert (gpus.nominal, gpus.borrowing_limit, gpus.lending_limit) == ("64", "32", "16")
    assert memory.nominal == "512Gi"
    assert memory.borrowing_limit is None
    assert memory.lending_limit is None


def test_the_wire_form_is_camel_case_and_reads_back_the_same() -> None:
    queue = Queue.model_validate(team_a(enforceMaxRunTime=True))
    wire = queue.to_dict()
    assert wire["spec"]["flavors"][0]["nodeLabels"] == {"gpu.example.com/model": "h100"}
    assert wire["spec"]["flavors"][0]["resources"][0] == {
        "name": "nvidia.com/gpu",
        "nominal": "64",
        "borrowingLimit": "32",
        "lendingLimit": "16",
    }
    assert wire["spec"]["maxRunSeconds"] == 3600
    assert wire["spec"]["enforceMaxRunTime"] is True
    assert wire["spec"]["preemption"] == {"withinQueue": "LowerPriority", "fairShare": False}
    assert Queue.model_validate(wire) == queue


def test_a_status_as_the_scheduler_writes_it_round_trips() -> None:
    status = {
        "observedGeneration": 2,
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "Admitting",
                "message": "",
                "lastTransitionTime": "2026-01-02T03:04:05Z",
                "observedGeneration": 2,
            }
        ],
        "flavors": [
            {
                "name": "h100",
                "resources": [
                    {"name": "nvidia.com/gpu", "nominal": "64", "used": 72, "borrowed": "8"}
                ],
            }
        ],
        "weightedShare": 0.25,
        "pendingGangs": 3,
        "admittedGangs": 5,
    }
    queue = Queue.model_validate({**team_a(), "status": status})
    assert queue.status is not None
    usage = queue.status.flavors[0].resources[0]
    assert (usage.used, usage.borrowed, usage.lent) == ("72", "8", "0")
    wire = queue.to_dict()["status"]
    assert wire["conditions"][0]["lastTransitionTime"] == "2026-01-02T03:04:05Z"
    assert wire["flavors"][0]["resources"][0]["used"] == "72"
    assert (wire["weightedShare"], wire["pendingGangs"], wire["admittedGangs"]) == (0.25, 3, 5)
    assert Queue.model_validate(queue.to_dict()) == queue


def test_an_empty_status_counts_nothing() -> None:
    status = QueueStatus()
    assert (status.pending_gangs, status.admitted_gangs, status.weighted_share) == (0, 0, None)
    assert status.conditions == []
    assert status.flavors == []


# -- helpers ------------------------------------------------------------------------------------


def test_quotas_in_milli_units_by_flavor_and_resource() -> None:
    spec = Queue.model_validate(team_a()).spec
    assert spec.quotas_milli() == {
        "h100": {
            "nvidia.com/gpu": QueueQuota(
                nominal=64_000, borrowing_limit=32_000, lending_limit=16_000
            ),
            "memory": QueueQuota(
                nominal=512 * 2**30 * 1000, borrowing_limit=None, lending_limit=None
            ),
        }
    }


def test_a_quota_reads_fractions_and_suffixes_as_the_placer_does() -> None:
    resource = QueueResource(name="cpu", nominal="1500m", borrowing_limit="0.5", lending_limit="1")
    assert resource.quota_milli() == QueueQuota(
        nominal=1500, borrowing_limit=500, lending_limit=1000
    )


def test_what_a_quota_lends_and_its_ceiling() -> None:
    assert QueueQuota(8000, None, None).lendable == 8000
    assert QueueQuota(8000, None, 2000).lendable == 2000
    assert QueueQuota(8000, None, None).ceiling is None
    assert QueueQuota(8000, 4000, None).ceiling == 12_000


def test_a_quota_beyond_an_int64_of_milli_units_counts_as_the_largest() -> None:
    # The apiserver stores "100E"; the placer's parser refuses it as out of range.
    resource = QueueResource(name="cpu", nominal="100E")
    assert resource.quota_milli().nominal == MAX_MILLI


def test_nominal_over_all_flavors() -> None:
    spec = QueueSpec.model_validate(
        {
            "flavors": [
                {"name": "h100", "resources": [gpu(nominal=64), {"name": "cpu", "nominal": 2}]},
                {"name": "a100", "resources": [gpu(nominal="16")]},
            ]
        }
    )
    assert spec.nominal_milli() == {"nvidia.com/gpu": 80_000, "cpu": 2000}
    flavor = spec.flavor("a100")
    assert flavor is not None
    assert flavor.quotas_milli() == {"nvidia.com/gpu": QueueQuota(16_000, None, None)}
    assert spec.flavor("b200") is None


def test_a_flavor_matches_nodes_by_its_labels() -> None:
    h100 = QueueFlavor.model_validate(
        {"name": "h100", "nodeLabels": {"gpu.example.com/model": "h100"}, "resources": [gpu()]}
    )
    assert h100.matches({"gpu.example.com/model": "h100", "zone": "a"})
    assert not h100.matches({"gpu.example.com/model": "a100"})
    assert not h100.matches({})
    anywhere = QueueFlavor.model_validate({"name": "any", "resources": [gpu()]})
    assert anywhere.matches({})
    assert anywhere.matches({"gpu.example.com/model": "a100"})


def test_run_time_estimates_and_enforcement() -> None:
    spec = QueueSpec(max_run_seconds=3600)
    assert spec.run_seconds(120.0) == 120.0
    assert spec.run_seconds(None) == 3600.0
    assert spec.enforced_run_seconds is None
    assert QueueSpec().run_seconds(None) is None
    assert QueueSpec(max_run_seconds=60, enforce_max_run_time=True).enforced_run_seconds == 60


# -- what is refused, in Python as by the CRD ---------------------------------------------------


def refused(document: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as caught:
        Queue.model_validate(document)
    return str(caught.value)


@pytest.mark.parametrize(
    ("spec", "field", "says"),
    [
        (
            {"flavors": one_flavor(gpu(nominal=8, lendingLimit=9))},
            "spec.flavors.0.resources.0",
            "lendingLimit must not exceed nominal",
        ),
        (
            {"flavors": one_flavor(gpu(nominal="1Gi", lendingLimit="1025Mi"))},
            "spec.flavors.0.resources.0",
            "lendingLimit must not exceed nominal",
        ),
        (
            {"flavors": one_flavor(gpu(), gpu(nominal=4))},
            "spec.flavors.0.resources",
            "resource 'nvidia.com/gpu' is listed twice",
        ),
        (
            {"flavors": [*one_flavor(gpu()), *one_flavor(gpu())]},
            "spec.flavors",
            "flavor 'h100' is listed twice",
        ),
        (
            {"flavors": one_flavor(gpu(nominal=-1))},
            "spec.flavors.0.resources.0.nominal",
            "must not be negative",
        ),
        (
            {"flavors": one_flavor(gpu(borrowingLimit="-2Gi"))},
            "spec.flavors.0.resources.0.borrowingLimit",
            "must not be negative",
        ),
        ({"weight": -0.5}, "spec.weight", "greater than or equal to 0"),
        (
            {"enforceMaxRunTime": True, "maxRunSeconds": None},
            "spec",
            "enforceMaxRunTime needs maxRunSeconds",
        ),
        ({"preemption": {"withinQueue": "Always"}}, "spec.preemption.withinQueue", "Never"),
        ({"maxRunSeconds": 0}, "spec.maxRunSeconds", "greater than or equal to 1"),
        ({"flavors": one_flavor()}, "spec.flavors.0.resources", "at least 1 item"),
        ({"parent": "Org_A"}, "spec.parent", "should match pattern"),
        ({"flavors": one_flavor(gpu(nominal="64 GPUs"))}, "nominal", "not a quantity"),
    ],
    ids=[
        "lending-above-nominal",
        "lending-above-nominal-suffixes",
        "resource-twice",
        "flavor-twice",
        "negative-nominal",
        "negative-borrowing-limit",
        "negative-weight",
        "enforce-without-max-run",
        "unknown-within-queue",
        "zero-max-run",
        "flavor-without-resources",
        "parent-not-a-name",
        "malformed-quantity",
    ],
)
def test_bad_input_is_refused_naming_the_field(spec: dict[str, Any], field: str, says: str) -> None:
    message = refused(team_a(**spec))
    assert field in message
    assert says in message


def test_a_queue_cannot_be_its_own_parent() -> None:
    assert "a queue cannot be its own parent" in refused(team_a(parent="team-a"))


def test_lending_all_of_nominal_is_allowed() -> None:
    queue = Queue.model_validate(team_a(flavors=one_flavor(gpu(nominal=8, lendingLimit="8"))))
    assert queue.spec.flavors[0].resources[0].quota_milli().lendable == 8000


def test_too_many_flavors_and_resources_are_refused() -> None:
    resources = [{"name": f"example.com/r{i}", "nominal": 1} for i in range(17)]
    assert "at most 16 items" in refused(team_a(flavors=one_flavor(*resources)))
    flavors = [{"name": f"f{i}", "resources": [gpu()]} for i in range(17)]
    assert "at most 16 items" in refused(team_a(flavors=flavors))
