"""Unit tests of ``crdkit run`` argument handling (no cluster needed); gen-rbac: test_rbac_cli."""

from __future__ import annotations

from click.testing import CliRunner

from crdkit.cli import main


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
