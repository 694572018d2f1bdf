"""Resolving the JSON paths a CRD version names (scale subresource, selectable fields) in its
structural schema, the way the apiserver and the scale subresource read them.

A path is a dotted field path (``.spec.replicas``). A step is a declared property or, in a map
(``additionalProperties``: ``dict[str, X]`` in the model), any key: PyTorchJob's
``.spec.pytorchReplicaSpecs.Worker.replicas`` is the map ``pytorchReplicaSpecs`` at key
``Worker``. A step into a list is never valid: neither the scale subresource nor field
selectors index into arrays. Past an ``x-kubernetes-preserve-unknown-fields`` object nothing is
known, so such a path resolves to "unknown" and the caller decides (the scale subresource reads
whatever is there; the apiserver refuses a selectable field there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["PathTarget", "resolve_path"]


@dataclass(frozen=True)
class PathTarget:
    """Where a path led: the schema at its end, or why it led nowhere.

    Exactly one of ``schema`` and ``problem`` is set, unless the path went into a
    preserve-unknown-fields object (``unknown``), where neither is.
    """

    schema: dict[str, Any] | None = None
    problem: str | None = None
    unknown: bool = False


def resolve_path(root: dict[str, Any], path: str) -> PathTarget:
    """The schema ``path`` (``.a.b.c``) names inside ``root``."""
    if not path.startswith(".") or path == ".":
        return PathTarget(problem="must be a field path starting with '.'")
    if "[" in path or "]" in path:
        return PathTarget(problem="array notation is not allowed")
    parts = path[1:].split(".")
    if any(not part for part in parts):
        return PathTarget(problem="has an empty step")
    node = root
    walked = ""
    for part in parts:
        properties = node.get("properties", {})
        if part in properties:
            node = properties[part]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]  # a map: ``part`` is one of its keys
        elif node.get("x-kubernetes-preserve-unknown-fields"):
            return PathTarget(unknown=True)
        elif node.get("type") == "array":
            return PathTarget(problem=f"goes into the list {walked or '.'}, which it cannot index")
        else:
            return PathTarget(problem="is not a field of the schema")
        walked += f".{part}"
    return PathTarget(schema=node)
