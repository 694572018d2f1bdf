"""The patch formats of the fake apiserver, on JSON values.

- JSON merge patch (RFC 7386): objects merge, ``null`` removes, anything else replaces.
- JSON patch (RFC 6902): add, remove, replace, move, copy, test.
- Server-side apply, approximated: the applied fields are merged into the object (maps merged,
  lists replaced as a whole), and a field a manager applied before but no longer applies is
  removed unless another manager applies it too. Unlike the apiserver, only appliers own
  fields (a field also written by a plain update is still removed), and there are no
  conflicts between managers.
- Strategic merge patch, approximated as a merge patch (lists are replaced, not merged by key).
"""

from __future__ import annotations

import copy
from typing import Any

from crdkit.testing.errors import KitError

__all__ = [
    "PatchError",
    "applied_paths",
    "apply_json_patch",
    "apply_merge_patch",
    "merge_applied",
    "remove_path",
]

Path = tuple[str, ...]
# Identity and concurrency fields are not "owned" by an applier: never removed.
_UNOWNED: frozenset[Path] = frozenset(
    {
        ("apiVersion",),
        ("kind",),
        ("metadata", "name"),
        ("metadata", "namespace"),
        ("metadata", "resourceVersion"),
        ("metadata", "uid"),
    }
)


class PatchError(KitError, ValueError):
    """A patch that cannot be applied (the apiserver answers 422 or 400)."""


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """``target`` with ``patch`` merged in (RFC 7386); neither argument is changed."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply_merge_patch(result.get(key), value)
    return result


def merge_applied(target: Any, applied: Any) -> Any:
    """Server-side apply, approximated: maps merge recursively, other values replace."""
    if not isinstance(applied, dict) or not isinstance(target, dict):
        return copy.deepcopy(applied)
    result = copy.deepcopy(target)
    for key, value in applied.items():
        result[key] = merge_applied(result.get(key), value)
    return result


def applied_paths(applied: Any, prefix: Path = ()) -> frozenset[Path]:
    """The leaf paths of an applied configuration: what its manager now owns (lists and
    empty maps are leaves)."""
    if not isinstance(applied, dict) or (not applied and prefix):
        return frozenset() if prefix in _UNOWNED else frozenset({prefix})
    paths: set[Path] = set()
    for key, value in applied.items():
        paths |= applied_paths(value, (*prefix, key))
    return frozenset(paths)


def remove_path(document: dict[str, Any], path: Path) -> None:
    """Delete the field at ``path`` (if there), then the maps it leaves empty."""
    trail: list[tuple[dict[str, Any], str]] = []
    node: Any = document
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return
        trail.append((node, key))
        node = node[key]
    for depth, (parent, key) in enumerate(reversed(trail)):
        if depth == 0 or parent[key] == {}:
            del parent[key]
        else:
            break
    if not document.get("metadata", True):
        document["metadata"] = {}


def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str) or (path and not path.startswith("/")):
        raise PatchError(f"invalid JSON pointer {path!r}")
    if path == "":
        return []
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _index(container: list[Any], token: str, *, adding: bool) -> int:
    if adding and token == "-":
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise PatchError(f"invalid array index {token!r}")
    index = int(token)
    if index > len(container) or (not adding and index == len(container)):
        raise PatchError(f"array index {index} out of bounds")
    return index


def _parent(document: Any, parts: list[str]) -> Any:
    node = document
    for token in parts[:-1]:
        if isinstance(node, dict):
            if token not in node:
                raise PatchError(f"missing path component {token!r}")
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, adding=False)]
        else:
            raise PatchError(f"cannot descend into a scalar at {token!r}")
    return node


def _get(document: Any, parts: list[str]) -> Any:
    if not parts:
        return document
    parent, key = _member(document, parts, "")
    return parent[key]


def _member(document: Any, parts: list[str], doing: str) -> tuple[Any, Any]:
    """The container of the value at ``parts`` and its key there (an int in a list).

    Reading and removing need the same lookup, and for both a missing value is an error (adding
    creates one instead); ``doing`` ends the message (": cannot remove it").
    """
    parent = _parent(document, parts)
    token = parts[-1]
    if isinstance(parent, dict) and token in parent:
        return parent, token
    if isinstance(parent, list):
        return parent, _index(parent, token, adding=False)
    raise PatchError(f"missing value at /{'/'.join(parts)}{doing}")


def _add(document: Any, parts: list[str], value: Any) -> Any:
    if not parts:
        return value
    parent = _parent(document, parts)
    token = parts[-1]
    if isinstance(parent, dict):
        parent[token] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, token, adding=True), value)
    else:
        raise PatchError(f"cannot add to a scalar at /{'/'.join(parts)}")
    return document


def _remove(document: Any, parts: list[str]) -> Any:
    if not parts:
        raise PatchError("cannot remove the whole document")
    parent, key = _member(document, parts, ": cannot remove it")
    del parent[key]
    return document


def apply_json_patch(target: Any, operations: Any) -> Any:
    """``target`` after the RFC 6902 ``operations``; ``PatchError`` names the failing one."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch must be a list of operations")
    document = copy.deepcopy(target)
    for number, operation in enumerate(operations):
        if not isinstance(operation, dict) or "op" not in operation:
            raise PatchError(f"operation {number}: not an object with an 'op'")
        op = operation["op"]
        parts = _pointer(operation.get("path"))
        if op in ("add", "replace", "test") and "value" not in operation:
            raise PatchError(f"operation {number} ({op}): missing 'value'")
        if op == "add":
            document = _add(document, parts, copy.deepcopy(operation["value"]))
        elif op == "remove":
            document = _remove(document, parts)
        elif op == "replace":
            _get(document, parts)  # must exist
            value = copy.deepcopy(operation["value"])
            document = _add(_remove(document, parts), parts, value) if parts else value
        elif op in ("move", "copy"):
            source = _pointer(operation.get("from"))
            value = copy.deepcopy(_get(document, source))
            if op == "move":
                document = _remove(document, source)
            document = _add(document, parts, value)
        elif op == "test":
            if _get(document, parts) != operation["value"]:
                raise PatchError(
                    f"operation {number} (test): the value at {operation['path']} differs"
                )
        else:
            raise PatchError(f"operation {number}: unknown op {op!r}")
    return document
