"""Old import paths of modules that moved to another package, kept working for one release.

A module left at its old path is three lines: its docstring, this import and
``alias(__name__, "new.path")``. The old name then *is* the new module (``sys.modules`` holds the
same object under both names), so its classes, its globals and anything a test patches stay one,
and the import warns once with a :class:`DeprecationWarning` that names the new path.
"""

from __future__ import annotations

import importlib
import sys
import warnings

__all__ = ["alias"]


def alias(old: str, new: str) -> None:
    """Make the module being imported as ``old`` the module ``new``, with a deprecation warning."""
    warnings.warn(
        f"{old} moved to {new}; import it from there (the old path goes in the next release)",
        DeprecationWarning,
        stacklevel=2,
    )
    sys.modules[old] = importlib.import_module(new)
