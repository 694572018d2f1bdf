"""Reading a placement document (a cluster snapshot, a gang, a list of gangs) from a file.

Kept apart from the models so that `crdkit place` can read its files without loading pydantic.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from crdkit._yaml import NestedTooDeeply, load_yaml

__all__ = ["MAX_DEPTH", "load_document"]


MAX_DEPTH = 64
"""How deeply a YAML placement document may nest (the contract needs six levels)."""


def load_document(path: str | Path) -> Any:
    """Read a JSON or YAML file (YAML is a superset of JSON; JSON is tried first for speed).

    Every failure is a one-line `ValueError` starting with the path: text that is not UTF-8,
    neither JSON nor YAML, or nested too deeply. JSON's decoder bounds its own recursion (a
    `RecursionError`, refused here); YAML can also build shared and cyclic values with
    aliases, so a YAML document is walked once more and refused past `MAX_DEPTH` levels (a
    cycle counts as endless). JSON skips that walk: it would cost as much as the parse on a
    large snapshot, and a JSON value is always a tree.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text: {err.reason} at byte {err.start}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply to read") from None
    try:
        document = load_yaml(text)
    except NestedTooDeeply:
        raise ValueError(f"{path}: nested too deeply to read") from None
    except ValueError as err:
        raise ValueError(f"{path}: not JSON or YAML: {err}") from None
    too_deep = _too_deep(document, MAX_DEPTH)
    if too_deep is not None:
        raise ValueError(f"{path}: {too_deep}: nested more than {MAX_DEPTH} levels deep")
    return document


def _too_deep(document: Any, limit: int) -> str | None:
    """The path of a value nested deeper than `limit` containers, or None.

    Breadth first and without recursion; a container reached twice on one level is walked
    once, so YAML aliases cost what the file's text does, and a cycle runs into the limit.
    """
    frontier: list[tuple[Any, str]] = [(document, "")]
    for _ in range(limit):
        deeper: list[tuple[Any, str]] = []
        seen: set[int] = set()
        for value, path in frontier:
            if isinstance(value, dict):
                pairs: Any = value.items()
            elif isinstance(value, list):
                pairs = enumerate(value)
            else:
                continue
            for key, child in pairs:
                if isinstance(child, dict | list) and id(child) not in seen:
                    seen.add(id(child))
                    step = f"[{key}]" if isinstance(value, list) else f".{key}" if path else key
                    deeper.append((child, f"{path}{step}"))
        if not deeper:
            return None
        frontier = deeper
    path = frontier[0][1]
    return path if len(path) <= 60 else f"{path[:60]}..."
