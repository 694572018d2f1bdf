"""The fault proxies' loop thread ends its loop as ``asyncio.run`` does, and a task made in the
loop's last pass still gets to clean up (checked by order, not by clock)."""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

from crdkit.testing.faults._loop_thread import LoopThread


async def _answer() -> int:
    return 42


def test_runs_coroutines_submitted_from_another_thread() -> None:
    thread = LoopThread("test-loop")
    try:
        assert thread.run(_answer()) == 42
    finally:
        thread.stop()
    assert thread.loop.is_closed()


def test_a_task_made_in_the_last_pass_is_started_before_it_is_cancelled() -> None:
    """What the loop does for a connection accepted just before the stop: the task that owns
    the socket is created in the same pass that stops the loop. Cancelled before its first step,
    it would never close the socket."""
    thread = LoopThread("test-loop")
    left, right = socket.socketpair()
    steps: list[str] = []
    made = threading.Event()
    tasks: list[asyncio.Task[None]] = []

    async def own(sock: socket.socket) -> None:
        steps.append("started")
        try:
            await asyncio.sleep(3600)
        finally:
            sock.close()
            steps.append("closed")

    def make_and_stop() -> None:
        tasks.append(asyncio.ensure_future(own(left), loop=thread.loop))
        thread.loop.stop()
        made.set()

    try:
        thread.loop.call_soon_threadsafe(make_and_stop)
        assert made.wait(30)
        thread.join()
    finally:
        right.close()
    assert steps == ["started", "closed"]
    assert left.fileno() == -1


def test_it_refuses_to_be_driven_from_its_own_loop() -> None:
    thread = LoopThread("test-loop")

    async def inside() -> None:
        thread.run(_answer())

    try:
        with pytest.raises(RuntimeError, match="its own event loop"):
            thread.run(inside())
    finally:
        thread.stop()
