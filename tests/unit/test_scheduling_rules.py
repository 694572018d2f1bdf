"""The scheduling wing's rules, checked on its source (beside `test_rooms.py`):

- no module of ``crdkit.scheduling`` is over 500 lines, and no class over 300;
- the parts that decide (the cycle, the gang builder, the queue, reservations, preemption,
  reporting, and what they read) make no API call: neither they nor anything they import loads
  the client's request machinery, the dispatcher, the binder or the scheduler;
- PodGroup API names appear only under ``scheduling/groups/``;
- a pod's requests are parsed once, by the mirror: no other module of the scheduler's path
  calls `pod_requests` (its own parser); that a scheduler passing many times over a waiting
  gang parses each pod once is `tests/unit/scheduling/test_scheduler_requests_once.py`.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import crdkit.scheduling
from crdkit.scheduling.groups import GROUP_APIS

WING = Path(crdkit.scheduling.__file__).parent
MODULE_LINES, CLASS_LINES = 500, 300

DECIDING = (
    "cycle",
    "gang_builder",
    "queue",
    "reservations",
    "preemption",
    "reporting",
    "pending",
    "room",
    "decisions",
)
"""The modules that decide; ``run_pass`` and its plugins are these."""

CALLERS = (
    "crdkit.client.client",
    "crdkit.client.transport",
    "crdkit.client.http1",
    "crdkit.scheduling.dispatcher",
    "crdkit.scheduling.binder",
    "crdkit.scheduling.scheduler",
)
"""Modules whose loading means API calls are within reach."""

PARSES_REQUESTS = {"requests.py", "mirror.py", "pod_ledger.py", "own_gang.py", "gangs.py"}
"""Where `pod_requests` may be called: its home, the mirror (and its ledger of pods), `OwnGangs`,
which places pods it is about to create (in no cache yet), and `build_gang`'s default for a
caller with no mirror; `tests/unit/scheduling/test_scheduler_requests_once.py` shows that the
scheduler's gangs never use that default."""


def _wing() -> list[Path]:
    return sorted(WING.rglob("*.py"))


def _name(path: Path) -> str:
    return str(path.relative_to(WING))


def oversized(source: str, name: str) -> list[str]:
    """What in ``source`` breaks the size rules."""
    found = []
    lines = source.count("\n")
    if lines > MODULE_LINES:
        found.append(f"{name}: {lines} lines")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > CLASS_LINES:
                found.append(f"{name}: class {node.name} is {length} lines")
    return found


def test_no_module_or_class_of_the_wing_is_oversized() -> None:
    found = [problem for path in _wing() for problem in oversized(path.read_text(), _name(path))]
    assert not found, "\n".join(found)


def test_the_size_check_sees_a_long_class() -> None:
    source = "class Long:\n" + "    x = 1\n" * CLASS_LINES
    assert oversized(source, "m.py") == [f"m.py: class Long is {CLASS_LINES + 1} lines"]


def _loaded_by(module: str) -> list[str]:
    """Every module importing ``module`` loads, in a fresh interpreter."""
    code = f"import sys, json, {module}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded: list[str] = json.loads(out)
    return loaded


@pytest.mark.parametrize("name", DECIDING)
def test_the_deciding_parts_cannot_reach_the_apiserver(name: str) -> None:
    loaded = set(_loaded_by(f"crdkit.scheduling.{name}"))
    assert not loaded & set(CALLERS), sorted(loaded & set(CALLERS))


@pytest.mark.parametrize("name", DECIDING)
def test_the_deciding_parts_name_no_caller_even_for_types(name: str) -> None:
    # A type-only import is not loaded, but it is a dependency all the same.
    tree = ast.parse((WING / f"{name}.py").read_text())
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module is not None
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert not imported & set(CALLERS), sorted(imported & set(CALLERS))


def test_the_reach_check_sees_a_caller() -> None:
    assert "crdkit.scheduling.dispatcher" in _loaded_by("crdkit.scheduling.scheduler")


def api_names_outside_groups(source: str) -> list[str]:
    """The PodGroup API names ``source`` spells as string literals."""
    names = set(GROUP_APIS)
    return sorted(
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
    )


def test_api_names_are_spelled_only_under_groups() -> None:
    found = {
        _name(path): spelled
        for path in _wing()
        if "groups" not in path.relative_to(WING).parts
        if (spelled := api_names_outside_groups(path.read_text()))
    }
    assert not found


def test_the_name_check_sees_a_name() -> None:
    assert api_names_outside_groups('if api == "volcano": pass') == ["volcano"]


def requests_parsed(source: str) -> int:
    """How many calls of `pod_requests` ``source`` makes."""
    return sum(
        1
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "pod_requests"
    )


def test_only_the_mirror_parses_requests_on_the_schedulers_path() -> None:
    found = {
        _name(path): count
        for path in _wing()
        if path.name not in PARSES_REQUESTS
        if (count := requests_parsed(path.read_text()))
    }
    assert not found


def test_the_parse_check_sees_a_call() -> None:
    assert requests_parsed("milli = pod_requests(pod)") == 1
