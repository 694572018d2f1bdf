"""What the cluster went through in one run: every change of the watched kinds, in order.

Recorded by a client of its own (not the operator's: its watches may be the ones a fault
tampers with, and it dies in a crash), so the history is the server's, whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crdkit.client.errors import KubernetesError
from crdkit.resources import KubernetesObject, resource_info

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from crdkit.client import Client

__all__ = ["History", "HistoryEvent", "HistoryRecorder"]


@dataclass(frozen=True)
class HistoryEvent:
    """One change: ``type`` is ADDED, MODIFIED or DELETED; ``obj`` the object after it (as
    it was, for DELETED)."""

    seq: int
    type: str
    kind: str
    obj: dict[str, Any]
    at: float = 0.0
    """When the recorder saw it, on the event loop's clock (virtual or not): for invariants
    bounded in time (how long an object went unowned, say)."""

    @property
    def metadata(self) -> dict[str, Any]:
        metadata = self.obj.get("metadata")
        return metadata if isinstance(metadata, dict) else {}

    @property
    def key(self) -> tuple[str, str | None, str]:
        """``(kind, namespace, name)``."""
        return (self.kind, self.metadata.get("namespace"), str(self.metadata.get("name")))

    @property
    def uid(self) -> str:
        return str(self.metadata.get("uid"))

    @property
    def resource_version(self) -> str:
        return str(self.metadata.get("resourceVersion"))


@dataclass
class History:
    """The changes of one run, in the order the server made them, and the end state."""

    namespace: str
    events: list[HistoryEvent] = field(default_factory=list)
    end_state: list[dict[str, Any]] = field(default_factory=list)

    def live_at(self, seq: int) -> dict[tuple[str, str | None, str], dict[str, Any]]:
        """The objects that existed after event ``seq`` (all events: ``len(events)``)."""
        live: dict[tuple[str, str | None, str], dict[str, Any]] = {}
        for event in self.events[:seq]:
            if event.type == "DELETED":
                live.pop(event.key, None)
            else:
                live[event.key] = event.obj
        return live

    def uids(self) -> set[str]:
        """Every uid the run's objects ever had."""
        return {event.uid for event in self.events}


class HistoryRecorder:
    """Watches ``kinds`` in ``namespace`` through ``client`` from :meth:`start` to
    :meth:`stop`, and lists the end state at :meth:`finish`."""

    def __init__(
        self,
        client: Client,
        kinds: Sequence[type[KubernetesObject]],
        namespace: str,
        *,
        on_event: Callable[[], None] = lambda: None,
    ) -> None:
        self.client = client
        self.kinds = list(dict.fromkeys(kinds))
        self.history = History(namespace)
        self._on_event = on_event
        self._tasks: list[asyncio.Task[None]] = []

    def _path(self, kind: type[KubernetesObject]) -> str:
        info = resource_info(kind)
        return info.path(namespace=self.history.namespace if info.namespaced else None)

    async def start(self) -> None:
        """Start watching; returns once every watch is open (so nothing after is missed)."""
        opened = [asyncio.Event() for _ in self.kinds]
        for kind, event in zip(self.kinds, opened, strict=True):
            self._tasks.append(
                asyncio.create_task(self._watch(kind, event), name=f"crash-history {kind}")
            )
        for event, task in zip(opened, self._tasks, strict=True):
            waiter = asyncio.ensure_future(event.wait())
            await asyncio.wait([waiter, task], return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            if task.done():
                task.result()  # a watch that could not open says why

    async def _watch(self, kind: type[KubernetesObject], opened: asyncio.Event) -> None:
        info = resource_info(kind)
        version = "0"
        while True:
            params = [("watch", "true"), ("resourceVersion", version)]
            try:
                async with self.client.transport.stream(
                    "GET", self._path(kind), params=params, idle_timeout=3600.0
                ) as body:
                    opened.set()
                    buffer = b""
                    while chunk := await body.readany():
                        buffer += chunk
                        *lines, buffer = buffer.split(b"\n")
                        for line in lines:
                            version = self._take(info.kind, line) or version
            except KubernetesError:
                if opened.is_set():
                    await asyncio.sleep(0.1)
                    continue
                raise

    def _take(self, kind: str, line: bytes) -> str | None:
        if not line.strip():
            return None
        event = json.loads(line)
        obj = event.get("object") or {}
        if event.get("type") not in ("ADDED", "MODIFIED", "DELETED"):
            return (obj.get("metadata") or {}).get("resourceVersion")
        obj.setdefault("kind", kind)
        events = self.history.events
        at = asyncio.get_running_loop().time()
        events.append(HistoryEvent(len(events) + 1, event["type"], kind, obj, at))
        self._on_event()
        return str((obj.get("metadata") or {}).get("resourceVersion"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    async def finish(self) -> History:
        """Stop watching and list the end state."""
        await self.stop()
        state: list[dict[str, Any]] = []
        for kind in self.kinds:
            info = resource_info(kind)
            listed = json.loads(await self.client.transport.request("GET", self._path(kind)))
            for item in listed.get("items") or []:
                item.setdefault("apiVersion", info.api_version)
                item.setdefault("kind", info.kind)
                state.append(item)
        self.history.end_state = state
        return self.history
