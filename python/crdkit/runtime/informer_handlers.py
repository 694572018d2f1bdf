"""Event handlers of an informer, each fed through its own queue so none can stall the watch.

A handler that awaits a slow API call, or raises, must not delay the informer reading its
watch (the apiserver drops watchers that do not keep up) nor the other handlers. So every
registration gets an unbounded queue and a task that delivers notifications in order, as
client-go's ``processorListener`` does. Handlers may be plain functions or coroutines.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

__all__ = [
    "AddHandler",
    "DeleteHandler",
    "EventOrigin",
    "HandlerRegistration",
    "UpdateHandler",
    "event_origin",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

AddHandler = Callable[[T], Awaitable[None] | None]
UpdateHandler = Callable[[T, T], Awaitable[None] | None]
DeleteHandler = Callable[[T], Awaitable[None] | None]

EventOrigin = Literal["change", "initial-list", "resync"]
"""Why a handler is called: a change the watch (or a relist) saw; an object of the informer's
first list (or, for a handler added later, of the store it is replayed); a periodic resync."""

_ORIGIN: contextvars.ContextVar[EventOrigin] = contextvars.ContextVar(
    "crdkit_event_origin", default="change"
)


def event_origin() -> EventOrigin:
    """Inside an informer event handler (and what it awaits), why it was called: what
    controller-runtime's ``IsInInitialList`` tells, and resyncs too. ``change`` elsewhere."""
    return _ORIGIN.get()


@dataclass(frozen=True, slots=True)
class _Notification(Generic[T]):
    kind: str  # "add" | "update" | "delete"
    old: T | None
    new: T
    origin: EventOrigin = "change"


class HandlerRegistration(Generic[T]):
    """One ``add_event_handler`` call: its callbacks, queue and delivery task."""

    def __init__(
        self,
        on_add: AddHandler[T] | None,
        on_update: UpdateHandler[T] | None,
        on_delete: DeleteHandler[T] | None,
        *,
        reads_old: bool = True,
    ) -> None:
        if on_add is None and on_update is None and on_delete is None:
            raise ValueError("an event handler needs at least one of on_add/on_update/on_delete")
        self.on_add = on_add
        self.on_update = on_update
        self.on_delete = on_delete
        self.reads_old = reads_old
        """Whether ``on_update`` reads its first argument (see ``Informer.add_event_handler``)."""
        self._queue: asyncio.Queue[_Notification[T]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.delivered = 0

    @property
    def pending(self) -> int:
        """Notifications queued but not yet delivered."""
        return self._queue.qsize()

    def add(self, obj: T, origin: EventOrigin = "change") -> None:
        if self.on_add is not None:
            self._queue.put_nowait(_Notification("add", None, obj, origin))

    def update(self, old: T, new: T, origin: EventOrigin = "change") -> None:
        if self.on_update is not None:
            self._queue.put_nowait(_Notification("update", old, new, origin))

    def delete(self, obj: T) -> None:
        if self.on_delete is not None:
            self._queue.put_nowait(_Notification("delete", None, obj))

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._deliver())

    async def stop(self) -> None:
        if self._task is not None:
            task, self._task = self._task, None
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def drained(self) -> None:
        """Wait until every queued notification has been handled (tests, graceful shutdown)."""
        await self._queue.join()

    async def _deliver(self) -> None:
        while True:
            note = await self._queue.get()
            token = _ORIGIN.set(note.origin)
            try:
                result: Any
                if note.kind == "add" and self.on_add is not None:
                    result = self.on_add(note.new)
                elif note.kind == "update" and self.on_update is not None:
                    assert note.old is not None
                    result = self.on_update(note.old, note.new)
                elif note.kind == "delete" and self.on_delete is not None:
                    result = self.on_delete(note.new)
                else:
                    result = None
                if inspect.isawaitable(result):
                    await result
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("informer event handler failed on %s", note.kind)
            finally:
                _ORIGIN.reset(token)
                self.delivered += 1
                self._queue.task_done()
