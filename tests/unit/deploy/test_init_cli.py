"""`crdkit init`: a new project with its config/ generated from its own code, bad names and
occupied folders refused (exit status 2) before anything is written."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from crdkit.cli import main
from crdkit.deploy.cli.init import init


def test_a_new_project_gets_its_sources_config_and_dockerfile(tmp_path: Path) -> None:
    target = tmp_path / "shop"
    result = CliRunner().invoke(init, [str(target), "--kind", "Order", "--group", "acme.io"])
    assert result.exit_code == 0, result.output
    assert f"wrote {target / 'shop' / 'reconciler.py'}" in result.output
    assert "  wrote config/crd/bases/acme.io_orders.yaml" in result.output
    [crd] = yaml.safe_load_all((target / "config/crd/bases/acme.io_orders.yaml").read_text())
    assert crd["metadata"]["name"] == "orders.acme.io"
    assert (
        "message"
        in crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
            "properties"
        ]
    )
    # The roles come from the reconciler: it applies ConfigMaps and writes its kind's status.
    role = (target / "config/rbac/role.yaml").read_text()
    assert "configmaps" in role
    assert "orders/status" in role
    assert "shop.reconciler:OrderReconciler" in (target / "Dockerfile").read_text()
    assert (target / "tests" / "test_live.py").exists()
    assert not list(target.rglob("__pycache__")), "the generation left bytecode behind"


def test_a_bad_kind_is_refused_naming_the_flag_and_nothing_is_written(tmp_path: Path) -> None:
    target = tmp_path / "shop"
    result = CliRunner().invoke(init, [str(target), "--kind", "order"])
    assert result.exit_code == 2
    assert "Invalid value for --kind: 'order' is not a CamelCase kind" in result.output
    assert not target.exists()


def test_a_bad_group_is_refused_naming_the_flag(tmp_path: Path) -> None:
    result = CliRunner().invoke(init, [str(tmp_path / "shop"), "--group", "acme_io"])
    assert result.exit_code == 2
    assert "Invalid value for --group: 'acme_io' is not a DNS subdomain" in result.output


def test_a_folder_with_files_is_refused_and_kept_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("mine\n")
    result = CliRunner().invoke(init, [str(tmp_path), "--name", "shop"])
    assert result.exit_code == 2
    assert "is not empty (Makefile)" in result.output
    assert "--force" in result.output
    assert [p.name for p in tmp_path.iterdir()] == ["Makefile"]
    assert (tmp_path / "Makefile").read_text() == "mine\n"


def test_force_writes_into_a_folder_and_says_what_it_overwrote(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("mine\n")
    (tmp_path / "notes.txt").write_text("kept\n")
    result = CliRunner().invoke(init, [str(tmp_path), "--name", "shop", "--force"])
    assert result.exit_code == 0, result.output
    assert f"overwrote {tmp_path / 'Makefile'}" in result.output
    assert f"wrote {tmp_path / 'pyproject.toml'}" in result.output
    assert (tmp_path / "notes.txt").read_text() == "kept\n"
    assert "gen-manifests" in (tmp_path / "Makefile").read_text()


def test_init_is_a_crdkit_command() -> None:
    result = CliRunner().invoke(main, ["init", "--help"])
    assert result.exit_code == 0
    assert "--kind" in result.output
    assert "--force" in result.output
