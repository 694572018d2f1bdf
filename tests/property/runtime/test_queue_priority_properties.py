"""Property tests of the work queue's priorities and wait bound, on a manual clock.

A state machine adds keys at random priorities, takes them, finishes them and moves the clock,
and checks each handed-out key against a model of the rule: a key that has waited ``max_wait``
goes first (the longest-waiting), else the highest priority, first come first served within
it, where a key that moved up joins the back of its new priority's line.
"""

from __future__ import annotations

from dataclasses import dataclass

from _queue_workers import Workers
from hypothesis import strategies as st
from hypothesis.stateful import invariant, rule

from crdkit.runtime.queue import PRIORITY_LOW, PRIORITY_NORMAL, QueueEmpty, WorkQueue

KEYS = st.sampled_from(["a", "b", "c", "d", "e"])
PRIORITIES = st.sampled_from([PRIORITY_LOW, PRIORITY_NORMAL, 10])
MAX_WAIT = 8.0


@dataclass
class Queued:
    priority: int
    added_at: float
    arrival: int  # order of the first add since it was last handed out
    line: int  # order of joining its current priority's line


class PriorityMachine(Workers):
    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self.queue: WorkQueue[str] = WorkQueue(
            "priorities", metrics=False, clock=lambda: self.now, max_wait=MAX_WAIT
        )
        self.queued: dict[str, Queued] = {}
        self.again: dict[str, int] = {}  # added while processing: the highest priority
        self.counter = 0

    def _tick(self) -> int:
        self.counter += 1
        return self.counter

    def _enqueue(self, key: str, priority: int) -> None:
        n = self._tick()
        self.queued[key] = Queued(priority, self.now, n, n)

    @rule(key=KEYS, priority=PRIORITIES)
    def add(self, key: str, priority: int) -> None:
        self.queue.add(key, priority)
        if key in self.processing:
            self.again[key] = max(self.again.get(key, priority), priority)
        elif key in self.queued:
            held = self.queued[key]
            if priority > held.priority:
                held.priority, held.line = priority, self._tick()
        else:
            self._enqueue(key, priority)

    @rule(seconds=st.sampled_from([0.5, 1.0, 3.0, 8.0, 20.0]))
    def wait(self, seconds: float) -> None:
        self.now += seconds

    @rule()
    def get(self) -> None:
        try:
            key = self.queue.get_nowait()
        except QueueEmpty:
            assert not self.queued
            return
        oldest = min(self.queued, key=lambda k: self.queued[k].arrival)
        if self.now - self.queued[oldest].added_at >= MAX_WAIT:
            expected = oldest
        else:
            top = max(q.priority for q in self.queued.values())
            expected = min(
                (k for k, q in self.queued.items() if q.priority == top),
                key=lambda k: self.queued[k].line,
            )
        assert key == expected, (key, expected, self.queued, self.now)
        del self.queued[key]
        self.processing.add(key)

    def finished(self, key: str) -> None:
        if key in self.again:
            self._enqueue(key, self.again.pop(key))

    @invariant()
    def matches_model(self) -> None:
        assert len(self.queue) == len(self.queued)
        for key, held in self.queued.items():
            assert self.queue.priority_of(key) == held.priority


TestPriorityMachine = PriorityMachine.TestCase
