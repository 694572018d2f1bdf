"""Each room's ``__init__`` is its API: what the examples and the documentation show a user
imports from the root ``crdkit`` or a room's face (``crdkit.runtime``, ``crdkit.testing``, ...),
names it lists in ``__all__``, and never a private module (a path component that starts with
``_``, such as ``crdkit._placer`` or ``crdkit.testing.faults._proxy_http``).

The examples are read as Python; the Markdown pages (``docs/`` and the README) line by line:
every line that starts with ``from crdkit`` or ``import crdkit``, with the lines a parenthesised
import continues on.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ROOMS = {
    "resources",
    "crd",
    "client",
    "runtime",
    "webhook",
    "deploy",
    "placer",
    "testing",
    "scheduling",
}


def markdown_imports(text: str) -> str:
    """The crdkit import statements of a Markdown page, one per line, as Python source."""
    statements: list[str] = []
    lines = iter(text.splitlines())
    for line in lines:
        stripped = line.strip()
        if not stripped.startswith(("from crdkit", "import crdkit")):
            continue
        statement = stripped
        while "(" in statement and ")" not in statement:
            statement += " " + next(lines, ")").strip()
        statements.append(statement.split("#", 1)[0].rstrip())
    return "\n".join(statements)


def _crdkit_imports(source: str) -> list[tuple[str, str | None]]:
    """(module, name) of every crdkit import in ``source``; name is None for ``import m``."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(a.name, None) for a in node.names if a.name.split(".")[0] == "crdkit"]
        elif (
            isinstance(node, ast.ImportFrom)
            and not node.level
            and (node.module or "").split(".")[0] == "crdkit"
        ):
            found += [(str(node.module), a.name) for a in node.names]
    return found


def private_imports(source: str) -> list[str]:
    """The crdkit imports in ``source`` that reach a private module or name."""
    wrong = []
    for module, name in _crdkit_imports(source):
        parts = [*module.split("."), *([name] if name is not None else [])]
        if any(part.startswith("_") for part in parts):
            wrong.append(f"{module}{'' if name is None else ' import ' + name}")
    return wrong


def off_the_faces(source: str) -> list[str]:
    """The crdkit imports in ``source`` that go past a room's face, or name what it does not
    export."""
    wrong = []
    for module, name in _crdkit_imports(source):
        parts = module.split(".")
        spelled = f"{module}{'' if name is None else ' import ' + name}"
        if len(parts) > 2 or (len(parts) == 2 and parts[1] not in ROOMS):
            wrong.append(spelled)
        elif name is not None and name not in importlib.import_module(module).__all__:
            wrong.append(f"{spelled} (not in {module}.__all__)")
    return wrong


def _sources() -> list[tuple[str, str]]:
    examples = [
        (str(path.relative_to(ROOT)), path.read_text())
        for path in sorted((ROOT / "examples").rglob("*.py"))
    ]
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return examples + [(str(p.relative_to(ROOT)), markdown_imports(p.read_text())) for p in pages]


SOURCES = _sources()


def test_the_examples_and_the_pages_are_read() -> None:
    names = {name for name, source in SOURCES if source}
    assert "examples/gang_scheduler/operator.py" in names
    assert "docs/quickstart.md" in names
    assert len(names) > 20


@pytest.mark.parametrize(("name", "source"), SOURCES, ids=[name for name, _ in SOURCES])
def test_no_private_module_is_imported(name: str, source: str) -> None:
    assert not private_imports(source)


@pytest.mark.parametrize(("name", "source"), SOURCES, ids=[name for name, _ in SOURCES])
def test_names_come_from_a_rooms_face(name: str, source: str) -> None:
    assert not off_the_faces(source)


# The checks themselves, on small sources: each must see what it is for.


def test_a_private_module_is_seen_wherever_it_is_spelled() -> None:
    source = (
        "import crdkit._placer\n"
        "from crdkit.testing.faults._proxy_http import HttpLayer\n"
        "from crdkit import _placer\n"
        "from crdkit.runtime import Manager\n"
        "import json\n"
    )
    assert private_imports(source) == [
        "crdkit._placer",
        "crdkit.testing.faults._proxy_http import HttpLayer",
        "crdkit import _placer",
    ]


def test_a_submodule_or_an_unexported_name_is_off_the_face() -> None:
    source = (
        "from crdkit.runtime.store import OWNER_INDEX\n"
        "from crdkit.runtime import Manager, Nonesuch\n"
        "from crdkit import Client\n"
        "from crdkit.scheduling.gangs import tier_level\n"
    )
    assert off_the_faces(source) == [
        "crdkit.runtime.store import OWNER_INDEX",
        "crdkit.runtime import Nonesuch (not in crdkit.runtime.__all__)",
        "crdkit.scheduling.gangs import tier_level",
    ]


def test_markdown_imports_are_read_from_code_lines_only() -> None:
    page = (
        "Import `crdkit._placer` in prose is no import.\n"
        "```python\n"
        "from crdkit.runtime import (\n"
        "    Manager, Reconciler,\n"
        ")\n"
        "    import crdkit._placer  # indented, in a list item\n"
        "x = 1\n"
        "```\n"
    )
    source = markdown_imports(page)
    assert source == "from crdkit.runtime import ( Manager, Reconciler, )\nimport crdkit._placer"
    assert private_imports(source) == ["crdkit._placer"]
