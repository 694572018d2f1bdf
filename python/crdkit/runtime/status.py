"""Writing status safely: the status subresource with optimistic concurrency and a retry.

A status write carries the object's ``resourceVersion``, so it fails with ``Conflict`` when
someone changed the object since it was read, rather than silently overwriting their change.
On a conflict the latest object is read, the status is applied to it again, and the write is
retried: the controller-runtime ``RetryOnConflict`` pattern.
"""

from __future__ import annotations

import asyncio
import functools
import random
from typing import TYPE_CHECKING, TypeVar

from crdkit.client.errors import Conflict
from crdkit.resources import KubernetesObject

if TYPE_CHECKING:
    from collections.abc import Callable

    from crdkit.client import Client

__all__ = ["update_status"]

K = TypeVar("K", bound=KubernetesObject)

_BACKOFF = 0.01  # client-go retry.DefaultRetry: 10 ms steps, factor 1, jitter 0.1


@functools.cache
def _has_status(kind: type[KubernetesObject]) -> bool:
    # Asked on every status write; pydantic's model_fields builds its answer on each access.
    return "status" in kind.model_fields


async def update_status(
    client: Client,
    obj: K,
    *,
    mutate: Callable[[K], None] | None = None,
    attempts: int = 5,
    field_manager: str | None = None,
) -> K:
    """Write ``obj``'s status (after ``mutate(obj)``, if given); return the stored object.

    On ``Conflict`` the latest object is read and either ``mutate`` is applied to it or, without
    ``mutate``, ``obj``'s status is copied onto it; then the write is tried again, up to
    ``attempts`` times in all, after which the ``Conflict`` is raised.
    """
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, got {attempts}")
    if not _has_status(type(obj)):
        raise TypeError(f"{type(obj).__qualname__} has no status field to write")
    # The caller's object is left as it was: ``mutate`` works on a copy. Without ``mutate``
    # nothing writes to ``obj`` (the write only serialises it), so no copy is needed.
    desired = obj
    if mutate is not None:
        desired = obj.model_copy(deep=True)
        mutate(desired)
    for attempt in range(attempts):
        try:
            return await client.replace_status(desired, field_manager=field_manager)
        except Conflict:
            if attempt == attempts - 1:
                raise
        await asyncio.sleep(_BACKOFF * (1 + random.random() * 0.1))
        name = desired.metadata.name or ""
        latest = await client.get(type(obj), name, namespace=desired.metadata.namespace)
        if mutate is not None:
            mutate(latest)
        else:
            latest.status = obj.status  # type: ignore[attr-defined]
        desired = latest
    raise AssertionError("unreachable")  # pragma: no cover
