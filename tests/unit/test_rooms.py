"""Each room of the package imports only the rooms below it, checked by walking every import
statement of every module (``TYPE_CHECKING`` and function-local imports included: a type-only
import is still a dependency on that room).

::

    resources ◀─ crd
        ▲
        └──── client ◀─ webhook ◀─ runtime ◀─ scheduling ─▶ placer (stands alone)
                                      ▲
                       deploy ────────┘  (generators: declarations, never the loop's HTTP)
                       testing ───────┘  (the test kit: above what it tests)
    crdkit.cli sits on top of them all.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import crdkit

PACKAGE = Path(crdkit.__file__).parent

# The rooms each room may import. The root's own small modules (_lazy, _yaml, _pki, ...) and
# the extension (_placer) are shared by all.
MAY_IMPORT: dict[str, set[str]] = {
    "resources": set(),
    "crd": {"resources"},
    "placer": set(),
    "client": {"resources"},
    "webhook": {"resources", "client"},
    "runtime": {"resources", "client", "webhook"},
    "scheduling": {"resources", "client", "runtime", "placer"},
    "deploy": {"resources", "crd", "client", "runtime", "webhook"},
    "testing": {"resources", "client", "runtime", "webhook"},
}


def _room(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "crdkit" or len(parts) < 2:
        return None
    return None if parts[1].startswith("_") else parts[1]


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _modules() -> list[tuple[str, Path]]:
    return sorted(
        (path.relative_to(PACKAGE).parts[0], path)
        for path in PACKAGE.rglob("*.py")
        if len(path.relative_to(PACKAGE).parts) > 1
    )


def test_every_room_is_listed() -> None:
    assert {room for room, _ in _modules()} == set(MAY_IMPORT)


@pytest.mark.parametrize("room", sorted(MAY_IMPORT))
def test_a_room_imports_only_the_rooms_below_it(room: str) -> None:
    wrong = []
    for owner, path in _modules():
        if owner != room:
            continue
        for name in sorted(_imports(path)):
            other = _room(name)
            if other is not None and other != room and other not in MAY_IMPORT[room]:
                wrong.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert not wrong, "\n".join(wrong)


def test_no_room_uses_relative_imports() -> None:
    # The walk above reads absolute names only; a relative import would slip past it.
    relative = [
        str(path.relative_to(PACKAGE))
        for _, path in _modules()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.level
    ]
    assert not relative


def _names_from_the_root(source: str) -> list[str]:
    """The names ``source`` imports from the package root that are not modules of it."""
    return [
        alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.module == "crdkit" and not node.level
        for alias in node.names
        if not any(
            (PACKAGE / leaf).exists()
            for leaf in (f"{alias.name}.py", f"{alias.name}.pyi", f"{alias.name}/__init__.py")
        )
    ]


def test_no_module_takes_a_name_from_the_package_root() -> None:
    # Under type checking the root imports the client and the runtime for its re-exports, so
    # `from crdkit import __version__` in a module they import closed a cycle of twenty-two
    # modules; the root's names come from their own modules (crdkit._version, ...).
    wrong = [
        f"{path.relative_to(PACKAGE)} imports {name} from crdkit"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "__init__.py"
        for name in _names_from_the_root(path.read_text())
    ]
    assert not wrong, "\n".join(wrong)


def test_the_root_name_check_sees_a_name_but_not_a_module() -> None:
    assert _names_from_the_root("from crdkit import __version__, _placer, client") == [
        "__version__"
    ]
