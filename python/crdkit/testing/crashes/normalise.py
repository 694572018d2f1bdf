"""Objects as two runs of one scenario can agree on: what differs by chance is taken out.

Two runs never share uids, resourceVersions, timestamps or the random suffixes of generated
names, and on a real apiserver each runs in a namespace of its own; nor do they bump
``generation`` the same number of times (a retried write may be applied twice). What is left
is what the operator decided, which is what a crash may change.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "NAMESPACE_PLACEHOLDER",
    "generated_names",
    "normalise",
    "normalise_state",
    "object_label",
]

NAMESPACE_PLACEHOLDER = "<namespace>"

# Set by the server, so they differ between runs whatever the operator does.
_DROPPED_METADATA = frozenset(
    {"uid", "resourceVersion", "managedFields", "creationTimestamp", "generation", "selfLink"}
)
_DROPPED_ANYWHERE = frozenset({"observedGeneration"})
_TIME_SUFFIXES = ("Timestamp", "Time")


def generated_names(objects: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Each name the server generated (from ``generateName``) → ``generateName*``."""
    names: dict[str, str] = {}
    for obj in objects:
        metadata = obj.get("metadata") or {}
        name, prefix = metadata.get("name"), metadata.get("generateName")
        if isinstance(name, str) and isinstance(prefix, str) and prefix and name.startswith(prefix):
            names[name] = f"{prefix}*"
    return names


def _clean(value: Any, names: Mapping[str, str], namespace: str | None) -> Any:
    if isinstance(value, dict):
        cleaned: dict[str, Any] = {}
        for key, item in value.items():
            if key in _DROPPED_ANYWHERE:
                continue
            # A time the server or the operator stamped (lastTransitionTime, startTime, ...).
            if isinstance(item, str) and key.endswith(_TIME_SUFFIXES):
                continue
            cleaned[key] = _clean(item, names, namespace)
        return cleaned
    if isinstance(value, list):
        return [_clean(item, names, namespace) for item in value]
    if isinstance(value, str):
        if namespace is not None and value == namespace:
            return NAMESPACE_PLACEHOLDER
        return names.get(value, value)
    return value


def normalise(
    obj: Mapping[str, Any],
    *,
    namespace: str | None = None,
    names: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``obj`` without what differs between runs by chance.

    Dropped: ``uid``, ``resourceVersion``, ``managedFields``, ``creationTimestamp``,
    ``generation``, ``selfLink``, every ``observedGeneration`` and every string field whose
    name ends in ``Time`` or ``Timestamp``; ``deletionTimestamp`` becomes ``"<set>"`` (being
    deleted is a state). A generated name becomes ``generateName*`` wherever it appears
    (``names``: as :func:`generated_names` finds them, default: this object's own), the run's
    ``namespace`` becomes ``<namespace>``, and owner references keep kind and name only.
    Idempotent: normalising twice changes nothing more.
    """
    given = dict(names) if names is not None else generated_names([obj])
    data = json.loads(json.dumps(obj))  # a deep copy that is plain JSON
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
    deleting = "deletionTimestamp" in metadata
    for key in _DROPPED_METADATA:
        metadata.pop(key, None)
    metadata.pop("deletionTimestamp", None)
    references = metadata.get("ownerReferences")
    if isinstance(references, list):
        metadata["ownerReferences"] = [
            {k: v for k, v in ref.items() if k != "uid"} if isinstance(ref, dict) else ref
            for ref in references
        ]
    data["metadata"] = metadata
    cleaned: dict[str, Any] = _clean(data, given, namespace)
    if deleting:
        cleaned["metadata"]["deletionTimestamp"] = "<set>"
    return cleaned


def object_label(obj: Mapping[str, Any]) -> str:
    """``Kind namespace/name`` of a (normalised or not) object."""
    metadata = obj.get("metadata") or {}
    name = metadata.get("name", "?")
    namespace = metadata.get("namespace")
    key = f"{namespace}/{name}" if namespace else str(name)
    return f"{obj.get('kind', '?')} {key}"


def normalise_state(
    objects: Iterable[Mapping[str, Any]], *, namespace: str | None = None
) -> Counter[str]:
    """The objects of one end state, normalised, as canonical JSON texts: a multiset, so two
    objects that normalise alike (duplicates with generated names) both count."""
    listed = list(objects)
    names = generated_names(listed)
    return Counter(
        json.dumps(normalise(obj, namespace=namespace, names=names), sort_keys=True)
        for obj in listed
    )
