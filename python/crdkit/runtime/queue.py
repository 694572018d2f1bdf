"""The work queue between event handlers and reconcile workers.

It has client-go's ``workqueue`` semantics, which are what make level-triggered controllers safe:

- a key waiting in the queue is held once, however often it is added (events collapse);
- a key being processed is never handed to a second worker; if it is added meanwhile it is marked
  *dirty* and handed out again after :meth:`WorkQueue.done`, so the change is not lost;
- :meth:`WorkQueue.add_after` delays an add (the earliest pending time wins), and
  :meth:`WorkQueue.add_rate_limited` delays it by the rate limiter's verdict for that key;
- :meth:`WorkQueue.shut_down` stops taking work: adds are ignored and :meth:`WorkQueue.get` raises
  :class:`QueueShutDown`; :meth:`WorkQueue.drain` then waits for in-flight keys to be done.

Keys have priorities, as controller-runtime's priority queue has them: the highest is handed out
first, first come first served within one. The controller adds the events of the informer's
initial list and its resyncs at `PRIORITY_LOW`, every fresh change at `PRIORITY_NORMAL`, so a
restart with 10,000 objects does not put a change made now behind all of them. A key added again
at a higher priority moves up (a key's priority is the highest it was added with since it was
last handed out). Unlike controller-runtime's queue, no key starves: one that has waited
``max_wait`` seconds (default `DEFAULT_MAX_WAIT`) is handed out before any key that has waited
less, the longest-waiting first, whatever the priorities.

Keys left waiting at shutdown are dropped on purpose: reconcilers are level-triggered, and the
next process (or leader) lists every object again when its caches start.

The queue belongs to one asyncio event loop and is not thread-safe, like :class:`asyncio.Queue`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Hashable
from typing import TYPE_CHECKING, Generic, TypeVar

from crdkit.runtime.errors import ControllerError
from crdkit.runtime.ratelimit import Clock, RateLimiter, default_controller_rate_limiter

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = [
    "DEFAULT_MAX_WAIT",
    "PRIORITY_LOW",
    "PRIORITY_NORMAL",
    "QueueEmpty",
    "QueueShutDown",
    "WorkQueue",
]

K = TypeVar("K", bound=Hashable)

PRIORITY_NORMAL = 0
"""A fresh change (and a retry)."""
PRIORITY_LOW = -100
"""Events of an informer's initial list and of its resyncs (controller-runtime's value)."""
DEFAULT_MAX_WAIT = 30.0
"""Seconds a queued key may wait before it is handed out ahead of every key that waited less."""


class _Entry(Generic[K]):
    """One queued key: the order it came in, when, and its priority (which may rise)."""

    __slots__ = ("added_at", "key", "priority", "seq")

    def __init__(self, key: K, seq: int, added_at: float, priority: int) -> None:
        self.key = key
        self.seq = seq
        self.added_at = added_at
        self.priority = priority


class QueueShutDown(ControllerError):
    """The queue was shut down: there is no more work to take."""


class QueueEmpty(ControllerError):
    """:meth:`WorkQueue.get_nowait` found nothing ready."""


class _QueueMetrics:
    """The queue's view of the controller-runtime ``workqueue_*`` metrics, for one queue name."""

    def __init__(self, name: str, registry: CollectorRegistry | None, clock: Clock) -> None:
        from crdkit.runtime.metrics import runtime_metrics

        families = runtime_metrics(registry)
        self._depth = families.workqueue_depth.labels(name, name)
        self._adds = families.workqueue_adds.labels(name, name)
        self._queue_duration = families.workqueue_queue_duration.labels(name, name)
        self._work_duration = families.workqueue_work_duration.labels(name, name)
        self._retries = families.workqueue_retries.labels(name, name)
        self._clock = clock
        self._added_at: dict[Hashable, float] = {}
        self._started_at: dict[Hashable, float] = {}
        # Computed at scrape time rather than by a polling loop as client-go does.
        families.workqueue_unfinished_work.labels(name, name).set_function(self._unfinished)
        families.workqueue_longest_running_processor.labels(name, name).set_function(self._longest)

    def _unfinished(self) -> float:
        now = self._clock()
        return sum(now - started for started in self._started_at.values())

    def _longest(self) -> float:
        now = self._clock()
        return max((now - started for started in self._started_at.values()), default=0.0)

    def added(self, key: Hashable) -> None:
        self._adds.inc()
        self._depth.inc()
        self._added_at.setdefault(key, self._clock())

    def taken(self, key: Hashable) -> None:
        self._depth.dec()
        now = self._clock()
        added = self._added_at.pop(key, None)
        if added is not None:
            self._queue_duration.observe(now - added)
        self._started_at[key] = now

    def finished(self, key: Hashable) -> None:
        started = self._started_at.pop(key, None)
        if started is not None:
            self._work_duration.observe(self._clock() - started)

    def retried(self) -> None:
        self._retries.inc()

    def dropped(self, count: int) -> None:
        self._depth.dec(count)
        self._added_at.clear()


class WorkQueue(Generic[K]):
    """A deduplicating, rate-limited, delaying FIFO of keys; see the module docstring.

    ``name`` labels the ``workqueue_*`` metrics (pass ``registry`` to keep them out of the
    process-wide registry, or ``metrics=False`` for none). ``rate_limiter`` defaults to
    client-go's controller default. ``max_wait`` bounds how long a key waits behind keys of
    higher priority (None: no bound, as controller-runtime's queue); ``clock`` (seconds,
    monotonic) measures waits and the metrics, so a test can drive it.
    """

    def __init__(
        self,
        name: str = "",
        *,
        rate_limiter: RateLimiter[K] | None = None,
        registry: CollectorRegistry | None = None,
        metrics: bool = True,
        clock: Clock = time.monotonic,
        max_wait: float | None = DEFAULT_MAX_WAIT,
    ) -> None:
        if max_wait is not None and not max_wait > 0:
            raise ValueError(f"max_wait: must be positive or None, got {max_wait!r}")
        self.name = name
        self.rate_limiter: RateLimiter[K] = (
            rate_limiter if rate_limiter is not None else default_controller_rate_limiter()
        )
        self.max_wait = max_wait
        self._clock = clock
        # Queued keys: their entries, one FIFO per priority, and one FIFO of all by arrival (for
        # the wait bound). A key that moves up leaves its old place behind as a stale entry,
        # skipped when reached; each entry is skipped at most once per FIFO.
        self._entries: dict[K, _Entry[K]] = {}
        self._by_priority: dict[int, deque[_Entry[K]]] = {}
        self._arrivals: deque[_Entry[K]] = deque()
        self._seq = 0
        self._priority_of_dirty: dict[K, int] = {}
        """The priority of keys added while processing, for when they are queued again."""
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._waiting: dict[K, tuple[float, asyncio.TimerHandle]] = {}
        self._getters: deque[asyncio.Future[None]] = deque()
        self._idle: asyncio.Event | None = None
        self._shutting_down = False
        self._metrics = _QueueMetrics(name, registry, clock) if metrics else None

    # -- adding -------------------------------------------------------------------------------

    def add(self, key: K, priority: int = PRIORITY_NORMAL) -> None:
        """Queue ``key`` unless it is already queued (then it only moves up, if ``priority`` is
        higher); if it is being processed, requeue it after, at the highest priority it was
        added with meanwhile."""
        if self._shutting_down:
            return
        if key in self._dirty:
            if key in self._processing:
                held = self._priority_of_dirty.get(key, priority)
                self._priority_of_dirty[key] = max(held, priority)
            else:
                self._raise(key, priority)
            return
        self._dirty.add(key)
        if self._metrics is not None:
            self._metrics.added(key)
        if key in self._processing:
            self._priority_of_dirty[key] = priority
            return
        self._push(key, priority)
        self._wake_one_getter()

    def _push(self, key: K, priority: int) -> None:
        self._seq += 1
        entry = _Entry(key, self._seq, self._clock(), priority)
        self._entries[key] = entry
        self._by_priority.setdefault(priority, deque()).append(entry)
        self._arrivals.append(entry)

    def _raise(self, key: K, priority: int) -> None:
        entry = self._entries[key]
        if priority <= entry.priority:
            return
        # The same entry (its arrival and place among all keys kept) in the higher FIFO; the
        # lower FIFO's reference is now stale (its priority no longer matches that FIFO's).
        entry.priority = priority
        self._by_priority.setdefault(priority, deque()).append(entry)

    def add_after(self, key: K, delay: float) -> None:
        """Add ``key`` after ``delay`` seconds (at `PRIORITY_NORMAL`); an earlier pending add
        of the same key wins."""
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(key)
            return
        loop = asyncio.get_running_loop()
        ready_at = loop.time() + delay
        pending = self._waiting.get(key)
        if pending is not None:
            if pending[0] <= ready_at:
                return
            pending[1].cancel()
        handle = loop.call_at(ready_at, self._delay_elapsed, key)
        self._waiting[key] = (ready_at, handle)

    def _delay_elapsed(self, key: K) -> None:
        self._waiting.pop(key, None)
        self.add(key)

    def add_rate_limited(self, key: K) -> None:
        """Add ``key`` once the rate limiter allows it (one more failure on its record)."""
        if self._shutting_down:
            return
        if self._metrics is not None:
            self._metrics.retried()
        self.add_after(key, self.rate_limiter.when(key))

    def forget(self, key: K) -> None:
        """Clear ``key``'s failure history, so its next failure starts the backoff afresh."""
        self.rate_limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        """How many rate-limited adds of ``key`` are on record since it was last forgotten."""
        return self.rate_limiter.num_requeues(key)

    # -- taking -------------------------------------------------------------------------------

    async def get(self) -> K:
        """Wait for a key and mark it as being processed; the caller must call :meth:`done`.

        Raises :class:`QueueShutDown` once the queue is shut down.
        """
        while not self._entries:
            if self._shutting_down:
                raise QueueShutDown(self.name)
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(waiter)
            try:
                await waiter
            except BaseException:
                waiter.cancel()
                with contextlib.suppress(ValueError):
                    self._getters.remove(waiter)
                # We may have been woken for a key we will never take: pass the wake-up on.
                if self._entries:
                    self._wake_one_getter()
                raise
        return self.get_nowait()

    def get_nowait(self) -> K:
        """Take a ready key without waiting, or raise :class:`QueueEmpty`/:class:`QueueShutDown`."""
        if self._shutting_down:
            raise QueueShutDown(self.name)
        if not self._entries:
            raise QueueEmpty(self.name)
        key = self._next().key
        del self._entries[key]
        self._dirty.discard(key)
        self._processing.add(key)
        if self._metrics is not None:
            self._metrics.taken(key)
        return key

    def _next(self) -> _Entry[K]:
        """The entry to hand out: the longest-waiting key if it has waited ``max_wait``, else
        the first of the highest priority. Stale references are dropped on the way."""
        arrivals = self._arrivals
        while arrivals[0] is not self._entries.get(arrivals[0].key):
            arrivals.popleft()
        head = arrivals[0]
        if self.max_wait is not None and self._clock() - head.added_at >= self.max_wait:
            arrivals.popleft()
            return head
        for priority in sorted(self._by_priority, reverse=True):
            fifo = self._by_priority[priority]
            while fifo:
                entry = fifo.popleft()
                if entry.priority == priority and self._entries.get(entry.key) is entry:
                    if not fifo:
                        del self._by_priority[priority]
                    return entry
            del self._by_priority[priority]
        raise AssertionError("a queued key is in no priority's FIFO")  # pragma: no cover

    def done(self, key: K) -> None:
        """Mark ``key`` as processed; if it was added meanwhile it goes back into the queue."""
        if key not in self._processing:
            raise ValueError(f"key {key!r} is not being processed by queue {self.name!r}")
        self._processing.discard(key)
        if self._metrics is not None:
            self._metrics.finished(key)
        priority = self._priority_of_dirty.pop(key, PRIORITY_NORMAL)
        if key in self._dirty and not self._shutting_down:
            self._push(key, priority)
            self._wake_one_getter()
        if not self._processing and self._idle is not None:
            self._idle.set()

    # -- lifecycle ----------------------------------------------------------------------------

    def shut_down(self) -> None:
        """Stop taking work: ignore adds, drop waiting keys, make every :meth:`get` raise."""
        if self._shutting_down:
            return
        self._shutting_down = True
        for _, handle in self._waiting.values():
            handle.cancel()
        self._waiting.clear()
        dropped = len(self._dirty)
        self._entries.clear()
        self._by_priority.clear()
        self._arrivals.clear()
        self._priority_of_dirty.clear()
        self._dirty.clear()
        if self._metrics is not None and dropped:
            self._metrics.dropped(dropped)
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)

    async def drain(self) -> None:
        """Wait until no key is being processed."""
        while self._processing:
            if self._idle is None or self._idle.is_set():
                self._idle = asyncio.Event()
            await self._idle.wait()

    async def shut_down_with_drain(self, grace: float | None = None) -> bool:
        """Shut down, then wait up to ``grace`` seconds for in-flight keys; True if all finished."""
        self.shut_down()
        try:
            await asyncio.wait_for(self.drain(), grace)
        except TimeoutError:
            return False
        return True

    @property
    def shutting_down(self) -> bool:
        """Whether :meth:`shut_down` was called."""
        return self._shutting_down

    @property
    def processing(self) -> frozenset[K]:
        """The keys handed out and not yet done."""
        return frozenset(self._processing)

    @property
    def pending_delayed(self) -> int:
        """How many keys wait for a delayed add."""
        return len(self._waiting)

    def __len__(self) -> int:
        """Keys ready to be taken (the depth, not counting keys dirty while processing)."""
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def priority_of(self, key: K) -> int | None:
        """The priority ``key`` is queued at; None when it is not queued."""
        entry = self._entries.get(key)
        return None if entry is None else entry.priority

    def _wake_one_getter(self) -> None:
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)
                return
