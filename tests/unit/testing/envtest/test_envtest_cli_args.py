"""``crdkit envtest`` refuses bad arguments in one line, exit status 2, before it starts
anything; the control plane's own errors are one line too. No control plane runs here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import crdkit.testing.envtest.control_plane
from crdkit.cli import main
from crdkit.testing.envtest.binaries import Binaries
from crdkit.testing.errors import BinariesNotFoundError


@pytest.fixture
def no_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting a control plane fails the test: these arguments must be refused before."""

    def started() -> Binaries:
        raise AssertionError("a control plane was started")

    monkeypatch.setattr(crdkit.testing.envtest.control_plane, "find_binaries", started)


def refusal(args: list[str]) -> str:
    result = CliRunner().invoke(main, ["envtest", *args])
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    return str(lines[0])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"just a string\n", "document 1 is not a mapping"),
        (b"kind: List\nitems: [1]\n", "document 1: items is not a list of mappings"),
        (b"a: [\n", "not YAML: while parsing a flow node"),
        (b"\xff", "not UTF-8 text (invalid start byte)"),
        (
            yaml.safe_dump({"kind": "CustomResourceDefinition", "metadata": {}}).encode(),
            "a CustomResourceDefinition without metadata.name",
        ),
    ],
)
@pytest.mark.parametrize("subcommand", ["run", "up"])
def test_bad_crds_are_refused_before_starting(
    tmp_path: Path, no_start: None, subcommand: str, content: bytes, message: str
) -> None:
    # Regression: a document that is not a mapping was an AttributeError traceback, after the
    # control plane had started.
    crds = tmp_path / "crds.yaml"
    crds.write_bytes(content)
    args = [subcommand, "--crds", str(crds), *(["--", "true"] if subcommand == "run" else [])]
    line = refusal(args)
    assert line.startswith(f"crdkit envtest: --crds {crds}")
    assert message in line


def test_a_missing_command_is_refused_before_starting(no_start: None) -> None:
    assert refusal(["run", "--", "crdkit-no-such-command", "-x"]) == (
        "crdkit envtest: crdkit-no-such-command: command not found (or not executable)"
    )


def test_a_kubeconfig_in_a_missing_folder_is_refused_before_starting(
    tmp_path: Path, no_start: None
) -> None:
    target = tmp_path / "missing" / "kc"
    assert refusal(["up", "--kubeconfig", str(target)]) == (
        f"crdkit envtest: --kubeconfig {target}: its folder does not exist"
    )


@pytest.mark.parametrize("args", [["run", "--", "true"], ["up"]])
def test_missing_binaries_are_one_line(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    def missing() -> Any:
        raise BinariesNotFoundError("kube-apiserver and etcd not found in /nowhere; build them")

    monkeypatch.setattr(crdkit.testing.envtest.control_plane, "find_binaries", missing)
    assert refusal(args) == (
        "crdkit envtest: kube-apiserver and etcd not found in /nowhere; build them"
    )
