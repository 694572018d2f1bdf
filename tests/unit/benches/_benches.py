"""How the smoke tests reach the benches: scripts in benches/, not an importable package."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHES = Path(__file__).resolve().parents[3] / "benches"


def load_bench(name: str) -> ModuleType:
    """benches/<name>.py run as the module ``name``, registered in ``sys.modules`` first (as an
    import would): a module's dataclasses look their module up there."""
    spec = importlib.util.spec_from_file_location(name, BENCHES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def bench_json(
    name: str,
    args: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Any:
    """The JSON benches/<name>.py prints when its ``main`` runs with the command line ``args``:
    what the smoke tests of a bench that reports on standard output look at."""
    module = load_bench(name)
    monkeypatch.setattr(sys, "argv", [name, *args])
    module.main()
    return json.loads(capsys.readouterr().out)
