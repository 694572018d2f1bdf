"""Where a new project goes: a folder that is missing or empty, or any folder with ``force``.

Nothing is ever overwritten silently: without ``force`` a folder with anything in it is
refused before a file is written, and with ``force`` each file that existed is reported as
overwritten.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit.deploy.scaffold.names import ScaffoldError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = ["check_target", "write_files"]

# How many of a refused folder's entries the error names: enough to recognise the folder.
_SHOWN = 3


def check_target(folder: Path, *, force: bool) -> None:
    """Refuse ``folder`` if it is a file, or a folder with entries and ``force`` is false."""
    if folder.exists() and not folder.is_dir():
        raise ScaffoldError("DIRECTORY", f"{folder} exists and is not a folder")
    if force or not folder.exists():
        return
    entries = sorted(entry.name for entry in folder.iterdir())
    if entries:
        shown = ", ".join(entries[:_SHOWN]) + (", ..." if len(entries) > _SHOWN else "")
        raise ScaffoldError(
            "DIRECTORY",
            f"{folder} is not empty ({shown}); choose an empty or new folder, or give --force "
            "to write into it (files of the same name are overwritten)",
        )


def write_files(folder: Path, contents: Mapping[str, str]) -> list[tuple[Path, bool]]:
    """Write each ``relative path -> text`` under ``folder``; return each path written and
    whether a file was there before (overwritten)."""
    written: list[tuple[Path, bool]] = []
    for relative, text in contents.items():
        path = folder / relative
        existed = path.exists()
        if path.is_dir():
            raise ScaffoldError("DIRECTORY", f"{path} is a folder where the project has a file")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append((path, existed))
    return written
