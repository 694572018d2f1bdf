"""An event recorder for ``events.k8s.io/v1`` Events, with repeats aggregated into a series.

A controller that fails the same way on every retry would otherwise create one Event per retry.
As in client-go's ``tools/events``, an event identical to one recorded recently (same object,
type, reason, action and note) is not created again: the existing Event's ``series`` (count and
lastObservedTime) is patched instead.

Recording never fails a reconcile: apiserver errors are logged and dropped.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from crdkit.client.errors import KubernetesError, NotFound
from crdkit.resources import Event, EventSeries, KubernetesObject, ObjectMeta, ObjectReference

if TYPE_CHECKING:
    from collections.abc import Callable

    from crdkit.client import Client

__all__ = ["EventRecorder", "EventType"]

log = logging.getLogger("crdkit.runtime.events")

EventType = Literal["Normal", "Warning"]

_MAX_NOTE = 1024  # the apiserver refuses longer notes
_SERIES_WINDOW = 6 * 60.0  # client-go: isomorphic events within 6 minutes form a series


@dataclass
class _Recorded:
    namespace: str
    name: str
    count: int
    last_seen: float


class EventRecorder:
    """Records Events about objects on behalf of one controller instance."""

    def __init__(
        self,
        client: Client,
        *,
        reporting_controller: str,
        reporting_instance: str,
        series_window: float = _SERIES_WINDOW,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``clock`` times the series window (a test's manual clock; default monotonic)."""
        if "/" not in reporting_controller:
            raise ValueError(
                "reporting_controller must be domain-qualified like 'example.com/hello', "
                f"got {reporting_controller!r}"
            )
        if not reporting_instance:
            raise ValueError("reporting_instance must not be empty")
        self._client = client
        self.reporting_controller = reporting_controller[:128]
        self.reporting_instance = reporting_instance[:128]
        self._window = series_window
        self._clock = clock
        # Oldest sighting first: expiring looks at the front only, so each event costs O(1)
        # however many distinct events are recent (a scheduler records one per waiting pod).
        self._recent: OrderedDict[tuple[str, ...], _Recorded] = OrderedDict()

    @property
    def remembered(self) -> int:
        """How many distinct recent events a repeat would join the series of."""
        return len(self._recent)

    async def event(
        self,
        regarding: KubernetesObject,
        type_: EventType,
        reason: str,
        note: str = "",
        *,
        action: str = "Reconcile",
    ) -> Event | None:
        """Record that ``action`` on ``regarding`` happened for ``reason``; returns the Event."""
        if type_ not in ("Normal", "Warning"):
            raise ValueError(f"type_ must be 'Normal' or 'Warning', got {type_!r}")
        if not reason:
            raise ValueError("reason must not be empty")
        meta = regarding.metadata
        if not meta.name:
            raise ValueError(f"the {regarding.kind} an event is about needs metadata.name")
        namespace = meta.namespace or "default"
        note = note[:_MAX_NOTE]
        key = (regarding.kind, namespace, meta.name, meta.uid or "", type_, reason, action, note)
        now_mono = self._clock()
        now = datetime.now(UTC)
        self._expire(now_mono)
        try:
            seen = self._recent.get(key)
            if seen is not None:
                self._recent.move_to_end(key)
                try:
                    return await self._bump(seen, now, now_mono)
                except NotFound:
                    del self._recent[key]  # deleted (or expired by TTL): start a new one
            created = await self._client.create(
                Event(
                    metadata=ObjectMeta(
                        name=f"{meta.name}.{time.time_ns():x}", namespace=namespace
                    ),
                    event_time=now,
                    reporting_controller=self.reporting_controller,
                    reporting_instance=self.reporting_instance,
                    action=action[:128],
                    reason=reason[:128],
                    type=type_,
                    note=note or None,
                    regarding=ObjectReference(
                        api_version=regarding.api_version,
                        kind=regarding.kind,
                        name=meta.name,
                        namespace=meta.namespace,
                        uid=meta.uid,
                        resource_version=meta.resource_version,
                    ),
                )
            )
            self._recent[key] = _Recorded(namespace, created.metadata.name or "", 1, now_mono)
            return created
        except KubernetesError as error:
            log.warning(
                "could not record event %s on %s %s/%s: %s",
                reason,
                regarding.kind,
                namespace,
                meta.name,
                error,
            )
            return None

    async def _bump(self, seen: _Recorded, now: datetime, now_mono: float) -> Event:
        seen.count += 1
        seen.last_seen = now_mono
        series = EventSeries(count=seen.count, last_observed_time=now)
        return await self._client.patch(
            Event,
            seen.name,
            {"series": series.model_dump(mode="json", by_alias=True)},
            namespace=seen.namespace,
        )

    def _expire(self, now_mono: float) -> None:
        recent = self._recent
        while recent:
            oldest = next(iter(recent.values()))
            if now_mono - oldest.last_seen <= self._window:
                return
            recent.popitem(last=False)
