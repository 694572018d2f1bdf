"""Handler delivery: in order, each registration on its own, errors contained."""

from __future__ import annotations

import asyncio
import logging

import pytest

from crdkit.runtime.informer_handlers import HandlerRegistration


async def test_delivers_in_order_sync_and_async() -> None:
    seen: list[tuple[str, object]] = []

    async def on_update(old: int, new: int) -> None:
        await asyncio.sleep(0)
        seen.append(("update", (old, new)))

    registration = HandlerRegistration(
        lambda obj: seen.append(("add", obj)), on_update, lambda obj: seen.append(("delete", obj))
    )
    registration.start()
    registration.add(1)
    registration.update(1, 2)
    registration.delete(2)
    await asyncio.wait_for(registration.drained(), 5)
    await registration.stop()
    assert seen == [("add", 1), ("update", (1, 2)), ("delete", 2)]
    assert registration.delivered == 3


async def test_a_slow_handler_does_not_hold_up_another() -> None:
    release = asyncio.Event()
    fast_seen: list[int] = []

    async def slow(obj: int) -> None:
        await release.wait()

    slow_registration = HandlerRegistration(slow, None, None)
    fast_registration = HandlerRegistration(fast_seen.append, None, None)
    for registration in (slow_registration, fast_registration):
        registration.start()
    for i in range(100):
        slow_registration.add(i)  # queuing never blocks the caller (the watch loop)
        fast_registration.add(i)
    await asyncio.wait_for(fast_registration.drained(), 5)
    assert fast_seen == list(range(100))
    assert slow_registration.pending >= 99
    release.set()
    await asyncio.wait_for(slow_registration.drained(), 5)
    for registration in (slow_registration, fast_registration):
        await registration.stop()


async def test_a_failing_handler_is_logged_and_delivery_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[int] = []

    def handler(obj: int) -> None:
        if obj == 1:
            raise RuntimeError("boom")
        seen.append(obj)

    registration = HandlerRegistration(handler, None, None)
    registration.start()
    with caplog.at_level(logging.ERROR):
        for i in range(3):
            registration.add(i)
        await asyncio.wait_for(registration.drained(), 5)
    await registration.stop()
    assert seen == [0, 2]
    assert "boom" in caplog.text


def test_unwanted_kinds_are_not_queued() -> None:
    registration: HandlerRegistration[int] = HandlerRegistration(None, None, lambda obj: None)
    registration.add(1)
    registration.update(1, 2)
    assert registration.pending == 0
    registration.delete(2)
    assert registration.pending == 1


def test_needs_a_callback() -> None:
    with pytest.raises(ValueError, match="at least one"):
        HandlerRegistration(None, None, None)
