"""RFC 6902 JSON Patches for a mutating webhook: from what a defaulter changed to a patch the
apiserver applies to the object it sent.

The defaulter works on a typed object, whose encoding may differ from the request's JSON
(fields the model does not declare are dropped, model defaults are added). So the diff is taken
between the model's encoding before and after the defaulter (only the user's changes show),
and each operation is then fitted to the request's JSON: a change under a parent the request
lacks becomes one ``add`` of the highest missing ancestor, a removal of something the request
lacks is left out. Lists are replaced whole when they differ: always right, and webhooks'
lists are short.
"""

from __future__ import annotations

from typing import Any

__all__ = ["fit_patch", "json_patch"]

_MISSING = object()


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _pointer(path: tuple[str | int, ...]) -> str:
    return "".join(f"/{_escape(str(part))}" for part in path)


def _diff(before: Any, after: Any, path: tuple[str | int, ...], out: list[dict[str, Any]]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before:
            if key not in after:
                out.append({"op": "remove", "path": _pointer((*path, key))})
        for key, value in after.items():
            if key not in before:
                out.append({"op": "add", "path": _pointer((*path, key)), "value": value})
            else:
                _diff(before[key], value, (*path, key), out)
    elif before != after or type(before) is not type(after):
        out.append({"op": "replace", "path": _pointer(path), "value": after})


def json_patch(before: Any, after: Any) -> list[dict[str, Any]]:
    """The operations that turn ``before`` into ``after`` (a replace of the root if they are not
    both objects)."""
    out: list[dict[str, Any]] = []
    _diff(before, after, (), out)
    return out


def _parse_pointer(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"a JSON pointer starts with '/', got {pointer!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/")]


def _child(doc: Any, key: str) -> Any:
    if isinstance(doc, dict):
        return doc.get(key, _MISSING)
    if isinstance(doc, list) and key.isdigit() and int(key) < len(doc):
        return doc[int(key)]
    return _MISSING


def fit_patch(patch: list[dict[str, Any]], target: Any, after: Any) -> list[dict[str, Any]]:
    """``patch`` (from :func:`json_patch` ending at ``after``) made applicable to ``target``."""
    fitted: list[dict[str, Any]] = []
    for op in patch:
        parts = _parse_pointer(op["path"])
        node, value = target, after
        for depth, key in enumerate(parts):
            value = _child(value, key)
            child = _child(node, key)
            if child is _MISSING:
                if op["op"] == "remove" and depth == len(parts) - 1:
                    break  # nothing to remove in the request
                # A member under an ancestor the request lacks changed (also by a removal):
                # the request gets that ancestor whole, as the defaulter left it.
                ancestor = _pointer(tuple(parts[: depth + 1]))
                fitted.append({"op": "add", "path": ancestor, "value": value})
                break
            node = child
        else:
            if op["op"] == "remove":
                fitted.append(op)
            else:
                # The member exists in the request, so a replace of it applies.
                fitted.append({"op": "replace", "path": op["path"], "value": op["value"]})
    return _dedupe(fitted)


def _dedupe(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Several changes under one missing ancestor each lift to the same add: keep one.
    seen: set[tuple[str, str]] = set()
    out = []
    for op in ops:
        key = (op["op"], op["path"])
        if key not in seen:
            seen.add(key)
            out.append(op)
    return out
