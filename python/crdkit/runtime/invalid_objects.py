"""What an informer does with a stored object its type refuses: report it, once per version.

Such an object (a CRD laxer than the model, a rule with no CEL twin, a field written by an
older or newer operator) is kept out of the informer's store; it must not stop the informer.
:class:`InvalidObjects` tracks which ones are out, and reports each version of each once:

* a warning in the log naming the object, its resourceVersion and every refused field path;
* ``crdkit_informer_decode_errors_total{group,kind}``, counted once per object and version;
* a Warning Event ``InvalidObject`` on the object (with an :class:`EventRecorder` only), so
  ``kubectl describe`` tells whoever wrote it what to fix.

A relist sees the same version again and reports nothing; a new version (fixed, or broken
differently) is decoded afresh. Events are recorded by one background task from a bounded
queue: a model change that refuses ten thousand objects at once cannot flood the apiserver
with concurrent requests, and a full queue drops events (the log and the metric still count).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import TYPE_CHECKING

from crdkit.resources import KubernetesObject, ObjectMeta
from crdkit.runtime.metrics import runtime_metrics

if TYPE_CHECKING:
    from collections.abc import Iterable

    from prometheus_client import CollectorRegistry

    from crdkit.client.codec import InvalidObject
    from crdkit.resources import ResourceInfo
    from crdkit.runtime.events import EventRecorder

__all__ = ["EVENT_QUEUE_SIZE", "INVALID_OBJECT_REASON", "InvalidObjects"]

log = logging.getLogger("crdkit.runtime.informer")

INVALID_OBJECT_REASON = "InvalidObject"
EVENT_QUEUE_SIZE = 256


class InvalidObjects:
    """The objects one informer keeps out of its store, by key, with the version reported."""

    def __init__(
        self,
        description: str,
        *,
        recorder: EventRecorder | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.description = description
        self.recorder = recorder
        self._registry = registry
        self._refused: dict[str, InvalidObject] = {}
        self._info: ResourceInfo | None = None
        self._events: asyncio.Queue[InvalidObject] = asyncio.Queue(EVENT_QUEUE_SIZE)
        self._worker: asyncio.Task[None] | None = None

    def identify(self, info: ResourceInfo) -> None:
        """The resource the objects are of (known once the informer resolved it)."""
        self._info = info

    # -- the set -----------------------------------------------------------------------------

    def __contains__(self, key: object) -> bool:
        return key in self._refused

    def __len__(self) -> int:
        return len(self._refused)

    def get(self, key: str) -> InvalidObject | None:
        return self._refused.get(key)

    def snapshot(self) -> dict[str, InvalidObject]:
        return dict(self._refused)

    def is_reported(self, key: str, resource_version: str | None) -> bool:
        """Whether this version of ``key`` is already out (a relist need not decode it)."""
        found = self._refused.get(key)
        return (
            found is not None
            and resource_version is not None
            and found.resource_version == resource_version
        )

    def forget(self, key: str) -> None:
        """``key`` was deleted, or a valid version of it was stored."""
        self._refused.pop(key, None)

    def retain(self, keys: Iterable[str]) -> None:
        """After a full list: forget every object the list no longer has."""
        keep = set(keys)
        for key in [key for key in self._refused if key not in keep]:
            del self._refused[key]

    # -- reporting ---------------------------------------------------------------------------

    def refuse(self, invalid: InvalidObject) -> bool:
        """Keep ``invalid`` out; report it unless this version already was. True if reported."""
        key = invalid.key
        if key is None:
            raise ValueError("an invalid object without a key cannot be tracked")
        if self.is_reported(key, invalid.resource_version):
            return False
        self._refused[key] = invalid
        group, kind = (self._info.group, self._info.kind) if self._info else ("", "")
        runtime_metrics(self._registry).informer_decode_errors.labels(group, kind).inc()
        log.warning(
            "informer %s: %s (resourceVersion %s) is not a valid %s; kept out of the cache "
            "until a version that is valid arrives: %s",
            self.description,
            key,
            invalid.resource_version,
            invalid.type_name,
            invalid.message,
            extra={
                "fields": {
                    "object": key,
                    "resourceVersion": invalid.resource_version,
                    "paths": invalid.paths,
                }
            },
        )
        if self.recorder is not None:
            try:
                self._events.put_nowait(invalid)
            except asyncio.QueueFull:
                log.debug("informer %s: event queue full; no Event for %s", self.description, key)
        return True

    async def start(self) -> None:
        if self.recorder is not None and self._worker is None:
            self._worker = asyncio.get_running_loop().create_task(self._record_events())

    async def stop(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await worker

    async def _record_events(self) -> None:
        assert self.recorder is not None
        while True:
            invalid = await self._events.get()
            note = (
                f"not a valid {invalid.type_name}, so the operator ignores it until it is "
                f"fixed: {invalid.message}"
            )
            try:
                regarding = self._regarding(invalid)
                await self.recorder.event(
                    regarding, "Warning", INVALID_OBJECT_REASON, note, action="Decode"
                )
            except Exception:  # recording is best effort; the log said it already
                log.exception("informer %s: could not record an Event", self.description)

    def _regarding(self, invalid: InvalidObject) -> KubernetesObject:
        """The object an Event is about, from its JSON: only its identity, which the model's
        refusal cannot be about (the apiserver checked ``metadata``)."""
        value = json.loads(invalid.raw)
        meta = value.get("metadata") or {}
        info = self._info
        return KubernetesObject(
            api_version=str(value.get("apiVersion") or (info.api_version if info else "")),
            kind=str(value.get("kind") or (info.kind if info else "")),
            metadata=ObjectMeta(
                name=meta.get("name"),
                namespace=meta.get("namespace"),
                uid=meta.get("uid"),
                resource_version=meta.get("resourceVersion"),
            ),
        )
