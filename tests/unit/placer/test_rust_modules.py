"""The Rust placer's modules form a layered graph, read from their `crate::` paths (the test
modules at each file's end left out: a test may use any helper).

::

    model, quantity ◀─ fit_cache ◀─ state ◀─ capacity ◀─ search ◀─ batch ◀─ python

`fit_cache` is data only (the cached capacities and their change log), so the state can own
it without depending on the arithmetic that fills it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[3] / "rust" / "placer" / "src"

# Each module and the crate modules it may name. A submodule (search/exact.rs) is its parent.
MAY_USE: dict[str, set[str]] = {
    "model": set(),
    "quantity": set(),
    "fit_cache": set(),
    "state": {"model", "fit_cache"},
    "capacity": {"model", "state", "fit_cache"},
    "search": {"model", "state", "capacity"},
    "batch": {"model", "state", "search"},
    "python": {"model", "quantity", "state", "batch"},
}

_CRATE_PATH = re.compile(r"\bcrate::(\w+)")
_TEST_MODULE = re.compile(r"^#\[cfg\(test\)\]\s*\n\s*mod ", re.MULTILINE)


def _module(path: Path) -> str:
    return path.relative_to(SOURCE).parts[0].removesuffix(".rs")


def _uses(path: Path) -> set[str]:
    text = path.read_text()
    end = _TEST_MODULE.search(text)
    return set(_CRATE_PATH.findall(text[: end.start()] if end else text))


def _sources() -> list[Path]:
    return sorted(p for p in SOURCE.rglob("*.rs") if _module(p) not in ("lib", "testing"))


def test_every_module_is_listed() -> None:
    assert {_module(p) for p in _sources()} == set(MAY_USE)


@pytest.mark.parametrize("module", sorted(MAY_USE))
def test_a_module_uses_only_the_modules_below_it(module: str) -> None:
    wrong = sorted(
        f"{path.relative_to(SOURCE)} uses crate::{used}"
        for path in _sources()
        if _module(path) == module
        for used in _uses(path) - MAY_USE[module] - {module}
    )
    assert not wrong, "\n".join(wrong)


def test_the_allowed_uses_have_no_cycle() -> None:
    # A module's allowed uses must all come before it in this order.
    order = list(MAY_USE)
    for module, allowed in MAY_USE.items():
        assert all(order.index(other) < order.index(module) for other in allowed), module
