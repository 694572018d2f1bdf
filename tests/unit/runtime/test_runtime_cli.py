"""Unit tests of ``crdkit run`` / ``crdkit gen-rbac`` argument handling (no cluster needed)."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from crdkit.cli import main


def test_gen_rbac_writes_role_and_binding(tmp_path: Path) -> None:
    out = tmp_path / "rbac.yaml"
    result = CliRunner().invoke(
        main,
        [
            "gen-rbac",
            "examples.hello.operator:HelloReconciler",
            "--name",
            "hello",
            "--service-account",
            "hello-sa",
            "--service-account-namespace",
            "ops",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    role, binding = yaml.safe_load_all(out.read_text())
    assert role["kind"] == "ClusterRole"
    resources = {rule["resources"][0] for rule in role["rules"]}
    assert {"hellos", "hellos/status", "hellos/finalizers", "configmaps", "leases"} <= resources
    assert binding["subjects"][0] == {
        "kind": "ServiceAccount",
        "name": "hello-sa",
        "namespace": "ops",
    }


def test_gen_rbac_names_a_bad_reference() -> None:
    result = CliRunner().invoke(main, ["gen-rbac", "examples.hello.operator:Nope"])
    assert result.exit_code == 2
    assert "has no attribute 'Nope'" in result.output


def test_run_rejects_bad_options_before_connecting() -> None:
    runner = CliRunner()
    result = runner.invoke(
        main,
        [
            "run",
            "examples.hello.operator:HelloReconciler",
            "--max-concurrent-reconciles",
            "0",
        ],
    )
    assert result.exit_code == 2
    assert "max-concurrent-reconciles" in result.output
    result = runner.invoke(main, ["run", "not-a-reference"])
    assert result.exit_code == 2
    assert "expected module:ReconcilerClass" in result.output


def test_hello_crd_is_up_to_date() -> None:
    result = CliRunner().invoke(
        main, ["gen-crd", "--check", "examples/hello", "examples.hello.operator:Hello"]
    )
    assert result.exit_code == 0, result.output
