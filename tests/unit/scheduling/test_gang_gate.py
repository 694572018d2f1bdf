"""`GangGate`: a gang's slots are taken all at once, gangs in arrival order; checked by the
order of events on the event loop, never by time."""

from __future__ import annotations

import asyncio

import pytest

from crdkit.scheduling.gang_gate import GangGate


async def hold(gate: GangGate, calls: int, log: list[str], name: str, leave: asyncio.Event) -> int:
    async with gate.admit(calls) as held:
        log.append(f"{name} in")
        await leave.wait()
        log.append(f"{name} out")
    return held


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_gang_waits_whole_until_the_slots_it_needs_are_free() -> None:
    gate, log = GangGate(4), []
    leave_a, leave_b = asyncio.Event(), asyncio.Event()
    a = asyncio.create_task(hold(gate, 3, log, "a", leave_a))
    b = asyncio.create_task(hold(gate, 3, log, "b", leave_b))
    await settle()
    assert log == ["a in"]  # one slot is free, but b needs three: it does not start in part
    leave_a.set()
    await settle()
    assert log == ["a in", "a out", "b in"]
    leave_b.set()
    assert await a == 3
    assert await b == 3
    assert gate.free == 4


async def test_gangs_are_admitted_first_come_first_served() -> None:
    gate, log = GangGate(4), []
    leaves = {name: asyncio.Event() for name in "abc"}
    tasks = [asyncio.create_task(hold(gate, 3, log, "a", leaves["a"]))]
    await settle()
    tasks.append(asyncio.create_task(hold(gate, 4, log, "b", leaves["b"])))
    await settle()
    tasks.append(asyncio.create_task(hold(gate, 1, log, "c", leaves["c"])))
    await settle()
    # c would fit beside a, but b came first: c does not overtake it (b would starve).
    assert log == ["a in"]
    leaves["a"].set()
    await settle()
    assert log == ["a in", "a out", "b in"]
    leaves["b"].set()
    await settle()
    assert log[-1] == "c in"
    leaves["c"].set()
    await asyncio.gather(*tasks)


async def test_a_gang_larger_than_the_gate_takes_every_slot() -> None:
    gate, log, leave = GangGate(2), [], asyncio.Event()
    task = asyncio.create_task(hold(gate, 5, log, "big", leave))
    await settle()
    assert gate.free == 0
    leave.set()
    assert await task == 2


async def test_a_gang_cancelled_while_waiting_leaks_no_slot() -> None:
    gate, log = GangGate(2), []
    leave_a, never = asyncio.Event(), asyncio.Event()
    a = asyncio.create_task(hold(gate, 2, log, "a", leave_a))
    await settle()
    b = asyncio.create_task(hold(gate, 2, log, "b", never))
    await settle()
    b.cancel()
    with pytest.raises(asyncio.CancelledError):
        await b
    leave_a.set()
    await a
    assert gate.free == 2
    c = asyncio.create_task(hold(gate, 2, log, "c", leave_a))
    assert await c == 2
    assert log == ["a in", "a out", "c in", "c out"]


def test_a_gate_needs_a_slot() -> None:
    with pytest.raises(ValueError, match=r"^slots: must be at least 1"):
        GangGate(0)
