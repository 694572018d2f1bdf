"""Property tests of the work queue.

A hypothesis state machine checks the queue against a model after every step (held once, never
queued while processing, nothing lost, FIFO); a randomised concurrent run checks that real
asyncio workers never process one key at the same time and that every add is seen by a later
reconcile.
"""

from __future__ import annotations

import asyncio
import random

from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from crdkit.runtime.queue import QueueEmpty, QueueShutDown, WorkQueue

KEYS = st.sampled_from(["a", "b", "c", "d"])


class QueueMachine(RuleBasedStateMachine):
    """Drives the queue synchronously (add, get_nowait, done, shut_down) next to a model."""

    def __init__(self) -> None:
        super().__init__()
        self.queue: WorkQueue[str] = WorkQueue("machine", metrics=False)
        self.order: list[str] = []  # the model's FIFO of ready keys
        self.processing: set[str] = set()
        # Keys added since a worker last took them: each must reach a worker again.
        self.owed: set[str] = set()
        self.shut = False

    @rule(key=KEYS)
    def add(self, key: str) -> None:
        self.queue.add(key)
        if self.shut:
            return
        if key not in self.order and key not in self.processing:
            self.order.append(key)
        self.owed.add(key)

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

    @precondition(lambda self: bool(self.processing))
    @rule(data=st.data())
    def done(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.processing)))
        self.queue.done(key)
        self.processing.discard(key)
        if key in self.owed and not self.shut:
            self.order.append(key)

    @rule()
    def shut_down(self) -> None:
        self.queue.shut_down()
        self.shut = True
        self.order.clear()
        self.owed.clear()

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
    asyncio.run(_run_workers(adds, workers, random.Random(seed)))


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
