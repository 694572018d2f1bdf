"""Reading the metadata of an object, typed (pydantic) or untyped (a JSON dict), the same way.

The store, the informer and the client all need an object's key, resourceVersion, labels and
owners without caring whether it is a ``Pod`` model or ``{"metadata": {...}}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "labels_of",
    "name_of",
    "namespace_of",
    "object_key",
    "owner_uids_of",
    "resource_version_of",
    "split_key",
    "uid_of",
]


def _meta_get(obj: Any, attr: str, key: str) -> Any:
    if isinstance(obj, Mapping):
        meta = obj.get("metadata")
        return meta.get(key) if isinstance(meta, Mapping) else None
    meta = getattr(obj, "metadata", None)
    return getattr(meta, attr, None) if meta is not None else None


def name_of(obj: Any) -> str | None:
    value = _meta_get(obj, "name", "name")
    return str(value) if value is not None else None


def namespace_of(obj: Any) -> str | None:
    value = _meta_get(obj, "namespace", "namespace")
    return str(value) if value else None


def uid_of(obj: Any) -> str | None:
    value = _meta_get(obj, "uid", "uid")
    return str(value) if value is not None else None


def resource_version_of(obj: Any) -> str | None:
    value = _meta_get(obj, "resource_version", "resourceVersion")
    return str(value) if value is not None else None


def labels_of(obj: Any) -> Mapping[str, str]:
    value = _meta_get(obj, "labels", "labels")
    return value if isinstance(value, Mapping) else {}


def owner_uids_of(obj: Any) -> list[str]:
    refs = _meta_get(obj, "owner_references", "ownerReferences") or []
    uids: list[str] = []
    for ref in refs:
        uid = ref.get("uid") if isinstance(ref, Mapping) else getattr(ref, "uid", None)
        if uid:
            uids.append(str(uid))
    return uids


def object_key(obj: Any) -> str:
    """``namespace/name`` for namespaced objects, ``name`` for cluster-scoped ones."""
    name = name_of(obj)
    if not name:
        raise ValueError(f"object has no metadata.name: {obj!r:.200}")
    namespace = namespace_of(obj)
    return f"{namespace}/{name}" if namespace else name


def split_key(key: str) -> tuple[str | None, str]:
    """The inverse of :func:`object_key`: ``(namespace or None, name)``."""
    namespace, sep, name = key.partition("/")
    return (namespace, name) if sep else (None, namespace)
