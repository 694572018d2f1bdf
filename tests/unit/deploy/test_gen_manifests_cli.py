from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from crdkit.deploy.cli.manifests import gen_manifests

ARGS = ["examples.hello.operator:HelloReconciler", "--name", "hello", "--image", "h:1"]


def run(tmp_path: Path, *extra: str) -> str:
    result = CliRunner().invoke(
        gen_manifests,
        [
            *ARGS,
            "-o",
            str(tmp_path / "config"),
            "--dockerfile",
            str(tmp_path / "Dockerfile"),
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_generated_files_are_rewritten_and_the_scaffold_is_kept(tmp_path: Path) -> None:
    first = run(tmp_path)
    assert f"wrote {tmp_path / 'Dockerfile'}" in first
    manager = tmp_path / "config" / "manager" / "manager.yaml"
    role = tmp_path / "config" / "rbac" / "role.yaml"
    manager.write_text("# edited by the user\n")
    role.write_text("# stale\n")
    stale = tmp_path / "config" / "crd" / "bases" / "old.example.com_olds.yaml"
    stale.write_text("---\n")

    second = run(tmp_path)
    assert f"kept {manager} (it exists; --force rewrites it)" in second
    assert manager.read_text() == "# edited by the user\n"
    assert f"wrote {role}" in second
    assert "ClusterRole" in role.read_text()
    assert f"kept {stale}: no reconciler uses its kind any more" in second
    assert stale.exists()

    run(tmp_path, "--force")
    assert "kind: Deployment" in manager.read_text()


def test_a_bad_reference_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        gen_manifests, ["nowhere:Nothing", "--name", "x", "--image", "x", "-o", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "nowhere" in result.output
