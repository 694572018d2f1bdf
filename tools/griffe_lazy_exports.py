"""For the API pages: each crdkit package's ``__all__``, derived as crdkit derives it at run time.

A crdkit package ``__init__`` spells no literal ``__all__``: its exports are the names it
imports as ``from m import Name as Name`` (under ``if TYPE_CHECKING:`` for those imported on
first use), and ``crdkit._lazy`` derives ``__all__`` from them. griffe reads the sources without
importing them and, finding no ``__all__``, would take none of those imported names as public;
this extension gives it the list ``crdkit._lazy.exports_of`` reads from the same syntax tree.

``crdkit._lazy`` is loaded from this checkout by its path (it imports nothing of crdkit), so the
pages are built from these sources whatever crdkit is installed.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING, Any

import griffe

if TYPE_CHECKING:
    from types import ModuleType

LAZY = Path(__file__).resolve().parents[1] / "python" / "crdkit" / "_lazy.py"


def _lazy() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_crdkit_lazy_for_docs", LAZY)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {LAZY}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class LazyExports(griffe.Extension):
    """Sets the exports of each crdkit package ``__init__`` that lists no ``__all__``."""

    def __init__(self) -> None:
        super().__init__()
        self._exports_of = _lazy().exports_of

    def on_module_members(self, *, node: Any, mod: griffe.Module, **kwargs: Any) -> None:
        if mod.exports is not None or not mod.is_init_module or not isinstance(node, ast.Module):
            return
        if mod.path.split(".")[0] != "crdkit":
            return
        names = self._exports_of(mod.path, node).names
        if names:
            mod.exports = list(names)
