"""A waiting gang's reports back off: a new reason is said at once, a new message of the same
reason (the counts of a saturated cluster change every pass) only once the gang's backoff has
passed, doubling up to the longest, with one pass called for when it ends. On a manual clock."""

from __future__ import annotations

import pytest

from crdkit.scheduling import ClusterMirror, GangScheduler, GroupRef
from crdkit.scheduling.decisions import Decision, Later
from crdkit.scheduling.reporting import Reporter

REF = GroupRef("pod", "ml", "p")


def reporter(clock: Clock, backoff: tuple[float, float]) -> Reporter:
    """The reporter a scheduler with ``report_backoff=backoff`` uses."""
    return Reporter(ClusterMirror([]), clock, backoff, explain_refresh=10.0)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_same_reason_reports_wait_out_a_doubling_backoff() -> None:
    clock = Clock()
    scheduler = reporter(clock, (1.0, 4.0))
    said: list[float] = []

    def report(reason: str) -> None:
        if scheduler.may_report(REF, reason, []):
            said.append(clock.now)
            scheduler.said[REF] = (reason, "message")

    for step in range(25):  # a new message every half second
        clock.now = step * 0.5
        report("Unschedulable")
    # At once, then after 1, 2, 4 and 4 s (the longest).
    assert said == [0.0, 1.0, 3.0, 7.0, 11.0]
    clock.now = 12.5
    report("WaitingForPods")  # a new reason: at once, and the backoff starts over
    clock.now = 13.0
    report("WaitingForPods")
    assert said[-2:] == [11.0, 12.5]
    clock.now = 13.5
    report("WaitingForPods")
    assert said[-1] == 13.5


async def test_a_held_back_report_calls_for_one_pass_when_its_backoff_ends() -> None:
    clock = Clock()
    scheduler = reporter(clock, (1.0, 4.0))
    decided: list[Decision] = []
    assert scheduler.may_report(REF, "Unschedulable", decided)
    scheduler.said[REF] = ("Unschedulable", "message")
    for now in (0.25, 0.5, 0.75):
        clock.now = now
        assert not scheduler.may_report(REF, "Unschedulable", decided)
    marked = [(d.ref, d.delay) for d in decided if isinstance(d, Later)]
    assert marked == [(REF, 0.75)]  # called for once, for when the backoff ends


async def test_no_backoff_writes_every_change() -> None:
    scheduler = reporter(Clock(), (0.0, 0.0))
    scheduler.said[REF] = ("Unschedulable", "message")
    assert all(scheduler.may_report(REF, "Unschedulable", []) for _ in range(5))


@pytest.mark.parametrize("bad", [(-1.0, 1.0), (2.0, 1.0), (1.0, float("inf"))])
def test_a_bad_backoff_names_the_field(bad: tuple[float, float]) -> None:
    with pytest.raises(ValueError, match=r"^report_backoff: "):
        GangScheduler("s", report_backoff=bad)
