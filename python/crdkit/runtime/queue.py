"""The work queue between event handlers and reconcile workers.

It has client-go's ``workqueue`` semantics, which are what make level-triggered controllers safe:

- a key waiting in the queue is held once, however often it is added (events collapse);
- a key being processed is never handed to a second worker; if it is added meanwhile it is marked
  *dirty* and handed out again after :meth:`WorkQueue.done`, so the change is not lost;
- :meth:`WorkQueue.add_after` delays an add (the earliest pending time wins), and
  :meth:`WorkQueue.add_rate_limited` delays it by the rate limiter's verdict for that key;
- :meth:`WorkQueue.shut_down` stops taking work: adds are ignored and :meth:`WorkQueue.get` raises
  :class:`QueueShutDown`; :meth:`WorkQueue.drain` then waits for in-flight keys to be done.

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

__all__ = ["QueueEmpty", "QueueShutDown", "WorkQueue"]

K = TypeVar("K", bound=Hashable)


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
    client-go's controller default.
    """

    def __init__(
        self,
        name: str = "",
        *,
        rate_limiter: RateLimiter[K] | None = None,
        registry: CollectorRegistry | None = None,
        metrics: bool = True,
        clock: Clock = time.monotonic,
    ) -> None:
        self.name = name
        self.rate_limiter: RateLimiter[K] = (
            rate_limiter if rate_limiter is not None else default_controller_rate_limiter()
        )
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._waiting: dict[K, tuple[float, asyncio.TimerHandle]] = {}
        self._getters: deque[asyncio.Future[None]] = deque()
        self._idle: asyncio.Event | None = None
        self._shutting_down = False
        self._metrics = _QueueMetrics(name, registry, clock) if metrics else None

    # -- adding -------------------------------------------------------------------------------

    def add(self, key: K) -> None:
        """Queue ``key`` unless it is already queued; if it is being processed, requeue it after."""
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        if self._metrics is not None:
            self._metrics.added(key)
        if key in self._processing:
            return
        self._queue.append(key)
        self._wake_one_getter()

    def add_after(self, key: K, delay: float) -> None:
        """Add ``key`` after ``delay`` seconds; an earlier pending add of the same key wins."""
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
        while not self._queue:
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
                if self._queue:
                    self._wake_one_getter()
                raise
        return self.get_nowait()

    def get_nowait(self) -> K:
        """Take a ready key without waiting, or raise :class:`QueueEmpty`/:class:`QueueShutDown`."""
        if self._shutting_down:
            raise QueueShutDown(self.name)
        if not self._queue:
            raise QueueEmpty(self.name)
        key = self._queue.popleft()
        self._dirty.discard(key)
        self._processing.add(key)
        if self._metrics is not None:
            self._metrics.taken(key)
        return key

    def done(self, key: K) -> None:
        """Mark ``key`` as processed; if it was added meanwhile it goes back into the queue."""
        if key not in self._processing:
            raise ValueError(f"key {key!r} is not being processed by queue {self.name!r}")
        self._processing.discard(key)
        if self._metrics is not None:
            self._metrics.finished(key)
        if key in self._dirty and not self._shutting_down:
            self._queue.append(key)
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
        self._queue.clear()
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
        return len(self._queue)

    def __contains__(self, key: object) -> bool:
        return key in self._queue

    def _wake_one_getter(self) -> None:
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)
                return
