"""`GangQueue`: the dirty set, retries on a manual clock, and the line (who is first, where a
gang stands, the order served), with no scheduler around it."""

from __future__ import annotations

from datetime import UTC, datetime

from crdkit.scheduling import GroupRef
from crdkit.scheduling.queue import GangQueue

A, B, C = (GroupRef("coscheduling", "ml", name) for name in "abc")


def at(second: int) -> tuple[datetime, str, str]:
    return (datetime(2026, 1, 1, 0, 0, second, tzinfo=UTC), "ml", f"g{second}")


def queue(now: list[float] | None = None) -> GangQueue:
    clock = now if now is not None else [0.0]
    return GangQueue(lambda: clock[0], (1.0, 8.0))


async def test_marked_gangs_are_taken_once_and_sorted() -> None:
    gangs = queue()
    assert not gangs.due
    gangs.mark(B)
    gangs.mark_all([A, B])
    assert gangs.due
    await gangs.wait()  # the wake-up is set: no wait
    assert gangs.take() == [A, B]
    assert gangs.take() == []
    gangs.mark_all([])
    assert not gangs.due  # nothing marked, nothing woken


def test_a_refused_gang_backs_off_longer_each_time_and_starts_over_when_bound() -> None:
    now = [10.0]
    gangs = queue(now)
    gangs.back_off(A)
    assert gangs.retry_in(A, now[0]) == 1.0
    assert gangs.retry_in(A, 11.0) is None
    gangs.back_off(A)
    assert gangs.retry_in(A, now[0]) == 2.0
    gangs.bound(A)
    gangs.back_off(A)
    assert gangs.retry_in(A, now[0]) == 1.0


def test_the_line_is_served_by_priority_then_place_and_tells_each_where_it_stands() -> None:
    gangs = queue()
    gangs.enqueue(A, 0, at(5))
    gangs.enqueue(B, 0, at(1))
    gangs.enqueue(C, 10, at(9))
    assert gangs.ordered() == [(C, 10), (B, 0), (A, 0)]
    assert gangs.place_note(A) == " [in line: 2 of 2 at priority 0, 1 waiting at higher priorities]"
    assert gangs.place_note(C) == " [in line: 1 of 1 at priority 10]"
    assert not gangs.first_in_line(A, 0, lambda other: False)
    assert gangs.first_in_line(A, 0, lambda other: other == B)  # B holds room already
    gangs.dequeue(B)
    assert gangs.first_in_line(A, 0, lambda other: False)
    assert gangs.place_note(A) == " [in line: 1 of 1 at priority 0, 1 waiting at higher priorities]"
    assert gangs.place_note(B) == ""
