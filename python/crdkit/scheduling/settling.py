"""Settling: the nodes a gang frees while the rest of it still runs are held back from
placement until the rest has ended too, or for ``seconds`` at most.

The pods of one gang end together (a training job's ranks exit within moments of each other,
and its controller deletes them in one sweep), but their ends reach the scheduler one event at a
time. Without settling, the node that frees first is taken at once by the next small gang in
line: with the domain otherwise full it is the best fit there is. The domain the gang held then
never frees whole, and the gangs that require a whole domain wait behind small ones that keep
every domain a little full. On a saturated mixed stream (`benches/queue_sim_bench.py
--end-spread`), that cost about 10 points of the GPUs in fully bound jobs and a tenth more
makespan, the figures a live control plane showed (`benches/scheduler_compare.py`).

A held node carries the mirror's `HOLD_TAINT` with the value ``settling:<gang>``, which no
gang tolerates; a node already held by a reservation is left to it. The hold ends when the
gang's last pod ends (all its nodes free at once, in one pass) or at its deadline, ``seconds``
after the first of them ended, whichever comes first; both free capacity, which wakes the
scheduler.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from crdkit.scheduling.mirror import ClusterMirror

__all__ = ["SETTLING_PREFIX", "Settling"]

SETTLING_PREFIX = "settling:"
"""The start of a settling hold's `HOLD_TAINT` value; the gang's name follows."""


@dataclass
class _Ending:
    deadline: float
    nodes: set[str] = field(default_factory=set)


class Settling:
    """The gangs whose pods are ending, and the nodes held for each until it has ended."""

    def __init__(self, mirror: ClusterMirror, seconds: float, clock: Callable[[], float]) -> None:
        if seconds < 0:
            raise ValueError(f"settle_seconds: expected a number >= 0, got {seconds!r}")
        self._mirror = mirror
        self.seconds = seconds
        self._clock = clock
        self._ending: dict[str, _Ending] = {}

    def pod_ended(self, gang: str, node: str, others_running: bool) -> float | None:
        """A pod of ``gang`` on ``node`` ended (finished, or deleted); ``others_running``:
        whether other pods of the gang still hold their nodes. Returns the deadline of a
        hold it starts (on ``clock``; the caller calls `expire` then), else None."""
        if not others_running:
            self._end(gang)
            return None
        if self.seconds == 0:
            return None
        ending = self._ending.get(gang)
        started = ending is None
        if ending is None:
            ending = self._ending[gang] = _Ending(self._clock() + self.seconds)
        elif ending.deadline <= self._clock():
            return None  # settled long enough: the rest of its room is free as it comes
        holder = self._mirror.holder(node)
        if holder is None:
            ending.nodes.add(node)
            self._mirror.hold([node], SETTLING_PREFIX + gang)
        return ending.deadline if started else None

    def _end(self, gang: str) -> None:
        ending = self._ending.pop(gang, None)
        if ending is not None and ending.nodes:
            self._mirror.release(ending.nodes, SETTLING_PREFIX + gang)

    def expire(self) -> None:
        """Release the holds whose deadline has come."""
        now = self._clock()
        for gang in [g for g, ending in self._ending.items() if ending.deadline <= now]:
            self._end(gang)

    def held(self) -> dict[str, set[str]]:
        """Each settling gang's held nodes (a copy)."""
        return {gang: set(ending.nodes) for gang, ending in self._ending.items()}
