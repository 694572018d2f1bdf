"""The `crdkit` group: every subcommand is listed, and one loads only the modules it drives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from crdkit.cli import COMMANDS, main


def test_help_lists_every_subcommand() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert f"  {name} " in result.output


def test_unknown_subcommand_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["nope"])
    assert result.exit_code == 2
    assert "No such command 'nope'" in result.output


def test_place_loads_neither_the_client_nor_the_runtime_nor_pydantic(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.json"
    cluster.write_text(
        json.dumps(
            {
                "levels": ["leaf"],
                "nodes": [{"name": "n1", "labels": {"leaf": "l1"}, "allocatable": {"gpu": 8}}],
            }
        )
    )
    gang = tmp_path / "gang.json"
    gang.write_text(json.dumps({"name": "g", "tasks": [{"name": "w", "replicas": 2}]}))
    probe = (
        "import json, sys\n"
        "from crdkit.cli import main\n"
        "try:\n"
        f"    main(['place', '--cluster', {str(cluster)!r}, '--gang', {str(gang)!r}])\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True, timeout=60
    )
    assert json.loads(done.stdout)["status"] == "placed"
    modules = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert "crdkit.placer.cli" in modules
    assert not {"crdkit.client", "crdkit.runtime", "crdkit.testing", "aiohttp"} & modules
    # A plainly valid document is read without the contract's models.
    assert not {"pydantic", "crdkit.placer.models", "crdkit.placer.cluster"} & modules


def test_version_is_the_installed_distributions() -> None:
    from importlib.metadata import version

    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"crdkit, version {version('crdkit')}\n"


def test_an_internal_error_is_one_line_unless_debugging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import crdkit.placer.cli

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(crdkit.placer.cli, "place_plainly", broken)
    (tmp_path / "c.json").write_text("{}")
    args = ["place", "--cluster", str(tmp_path / "c.json"), "--gang", str(tmp_path / "c.json")]
    monkeypatch.delenv("CRDKIT_DEBUG", raising=False)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "crdkit place: internal error: RuntimeError: boom second line (a crdkit bug: please "
        "report it; CRDKIT_DEBUG=1 shows the traceback)"
    ]
    monkeypatch.setenv("CRDKIT_DEBUG", "1")
    result = CliRunner().invoke(main, args)
    assert isinstance(result.exception, RuntimeError)
