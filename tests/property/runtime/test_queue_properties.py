"""Property tests of the work queue.

A hypothesis state machine checks the queue against a model after every step (held once, never
queued while processing, nothing lost, FIFO); a randomised concurrent run checks that real
asyncio workers never process one key at the same time and that every add is seen by a later
reconcile.
"""

from __future__ import annotations

import asyncio
import random

from _queue_workers import Workers
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import invariant, rule

from crdkit.runtime.queue import QueueEmpty, QueueShutDown, WorkQueue
from crdkit.runtime.ratelimit import ItemExponentialRateLimiter
from crdkit.testing.sim.virtual_time import run_on_virtual_clock

KEYS = st.sampled_from(["a", "b", "c", "d"])


# Powers of two, so every clock value below is exact and deadlines compare without rounding.
TICK = 2.0**-10
BASE_DELAY, MAX_DELAY = TICK, 1.0


class ManualClockLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock moves only when told, so delayed adds fire exactly then."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0

    def time(self) -> float:
        return self.now


class QueueMachine(Workers):
    """Drives the queue (add, get_nowait, done, rate-limited adds, forget, shut_down) next to a
    model. Delayed adds run on a private event loop whose clock only ``elapse`` moves."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = ManualClockLoop()
        self.queue: WorkQueue[str] = WorkQueue(
            "machine",
            metrics=False,
            rate_limiter=ItemExponentialRateLimiter(BASE_DELAY, MAX_DELAY),
        )
        self.order: list[str] = []  # the model's FIFO of ready keys
        # Keys added since a worker last took them: each must reach a worker again.
        self.owed: set[str] = set()
        self.failures: dict[str, int] = {}
        self.delayed: set[str] = set()
        self.deadline = 0.0  # when the (single) delayed key is due
        self.shut = False

    def teardown(self) -> None:
        self.loop.close()

    def _model_add(self, key: str) -> None:
        if key not in self.order and key not in self.processing:
            self.order.append(key)
        self.owed.add(key)

    @rule(key=KEYS)
    def fail(self, key: str) -> None:
        """A reconcile of ``key`` failed: retry it later, with a longer delay each time.

        One key at most waits at a time, so the order in which delays run out is known.
        """
        if self.delayed:
            key = next(iter(self.delayed))

        async def requeue() -> None:
            self.queue.add_rate_limited(key)

        self.loop.run_until_complete(requeue())
        if self.shut:
            return
        failures = self.failures.get(key, 0)
        delay = min(BASE_DELAY * 2**failures, MAX_DELAY)  # the backoff doubles per failure
        due = self.loop.now + delay
        self.deadline = min(self.deadline, due) if self.delayed else due  # earliest wins
        self.failures[key] = failures + 1
        self.delayed.add(key)

    # Mostly steps around the early, short delays; sometimes any step up to past the cap.
    @rule(
        ticks=st.one_of(
            st.integers(1, 4), st.integers(0, 10).map(lambda e: 2**e), st.integers(1, 1100)
        )
    )
    def tick(self, ticks: int) -> None:
        """Move the clock a little: the delayed key is added exactly when its delay is over."""
        self.loop.now += ticks * TICK
        self.loop.run_until_complete(asyncio.sleep(0))
        if self.delayed and self.deadline <= self.loop.now:
            delayed, self.delayed = self.delayed, set()
            for key in delayed:
                self._model_add(key)

    @rule(key=KEYS)
    def forget(self, key: str) -> None:
        self.queue.forget(key)
        self.failures.pop(key, None)

    @rule()
    def elapse(self) -> None:
        """Move the clock past the longest delay and let the due timers fire."""
        self.loop.now += MAX_DELAY * 2
        self.loop.run_until_complete(asyncio.sleep(0))
        delayed, self.delayed = self.delayed, set()
        if not self.shut:
            for key in delayed:
                self._model_add(key)

    @invariant()
    def backoff_matches_failures(self) -> None:
        for key in ("a", "b", "c", "d"):
            assert self.queue.num_requeues(key) == self.failures.get(key, 0)
        assert self.queue.pending_delayed == len(self.delayed)

    @rule(key=KEYS)
    def add(self, key: str) -> None:
        self.queue.add(key)
        if not self.shut:
            self._model_add(key)

    @rule()
    def get(self) -> None:
        if self.shut:
            try:
                self.queue.get_nowait()
            except QueueShutDown:
                return
            raise AssertionError("get after shut_down must raise QueueShutDown")
        try:
            key = self.queue.get_nowait()
        except QueueEmpty:
            assert not self.order
            return
        assert self.order, f"queue handed out {key!r} while the model holds nothing ready"
        assert key == self.order.pop(0), "keys must come out in FIFO order"
        assert key not in self.processing, f"{key!r} handed to a second worker"
        self.processing.add(key)
        self.owed.discard(key)

    def finished(self, key: str) -> None:
        if key in self.owed and not self.shut:
            self.order.append(key)

    @rule()
    def shut_down(self) -> None:
        self.queue.shut_down()
        self.shut = True
        self.order.clear()
        self.owed.clear()
        self.delayed.clear()

    @invariant()
    def matches_model(self) -> None:
        assert len(self.queue) == len(self.order)
        assert all(key in self.queue for key in self.order)
        assert self.queue.processing == frozenset(self.processing)

    @invariant()
    def nothing_lost(self) -> None:
        for key in self.owed:
            assert key in self.queue or key in self.processing, f"add of {key!r} was lost"

    @invariant()
    def never_queued_while_processing(self) -> None:
        for key in self.processing:
            assert key not in self.queue


TestQueueMachine = QueueMachine.TestCase


@given(
    adds=st.lists(st.tuples(KEYS, st.integers(0, 3)), min_size=1, max_size=40),
    workers=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_concurrent_workers_never_overlap_and_see_every_add(
    adds: list[tuple[str, int]], workers: int, seed: int
) -> None:
    run_on_virtual_clock(_run_workers(adds, workers, random.Random(seed)))


async def _run_workers(adds: list[tuple[str, int]], workers: int, rng: random.Random) -> None:
    queue: WorkQueue[str] = WorkQueue("concurrent", metrics=False)
    loop = asyncio.get_running_loop()
    active: set[str] = set()
    starts: dict[str, list[float]] = {}
    added_at: dict[str, list[float]] = {}
    idle = asyncio.Event()

    async def worker() -> None:
        while True:
            try:
                key = await queue.get()
            except QueueShutDown:
                return
            assert key not in active, f"{key!r} processed by two workers at once"
            active.add(key)
            starts.setdefault(key, []).append(loop.time())
            await asyncio.sleep(rng.choice([0, 0, 0.001, 0.002]))
            active.discard(key)
            queue.done(key)
            if not len(queue) and not queue.processing:
                idle.set()

    tasks = [asyncio.create_task(worker()) for _ in range(workers)]
    for key, pause in adds:
        added_at.setdefault(key, []).append(loop.time())
        queue.add(key)
        await asyncio.sleep(pause / 1000)
    while len(queue) or queue.processing:
        idle.clear()
        await idle.wait()
    await queue.shut_down_with_drain(grace=1)
    await asyncio.gather(*tasks)

    for key, times in added_at.items():
        # Level-triggered: the last add must be followed by a reconcile that started after it.
        assert starts.get(key), f"{key!r} was added but never processed"
        assert max(starts[key]) >= max(times), f"the last add of {key!r} was never processed"
