"""Unit tests of the work queue: dedup, one worker per key, delays, backoff, shutdown, metrics."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import CollectorRegistry

from crdkit.runtime.queue import QueueEmpty, QueueShutDown, WorkQueue
from crdkit.runtime.ratelimit import ItemExponentialRateLimiter
from crdkit.testing.sim.virtual_time import run_on_virtual_clock


def new_queue(**kwargs: object) -> WorkQueue[str]:
    return WorkQueue("test", registry=CollectorRegistry(), **kwargs)  # type: ignore[arg-type]


async def test_queued_key_is_held_once() -> None:
    queue = new_queue()
    for key in ["a", "b", "a", "a", "b", "c"]:
        queue.add(key)
    assert len(queue) == 3
    assert [queue.get_nowait() for _ in range(3)] == ["a", "b", "c"]
    with pytest.raises(QueueEmpty):
        queue.get_nowait()


async def test_key_added_while_processing_comes_back_after_done() -> None:
    queue = new_queue()
    queue.add("a")
    assert await queue.get() == "a"
    queue.add("a")
    queue.add("a")
    assert len(queue) == 0, "a key being processed must not be handed to a second worker"
    queue.done("a")
    assert await queue.get() == "a"
    queue.done("a")
    assert len(queue) == 0


async def test_done_of_unknown_key_is_an_error() -> None:
    queue = new_queue()
    with pytest.raises(ValueError, match="'x'"):
        queue.done("x")


async def test_get_waits_for_an_add() -> None:
    queue = new_queue()
    getter = asyncio.create_task(queue.get())
    await asyncio.sleep(0.01)
    assert not getter.done()
    queue.add("a")
    assert await asyncio.wait_for(getter, 1) == "a"


async def test_cancelled_getter_passes_its_wake_up_on() -> None:
    queue = new_queue()
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await asyncio.sleep(0.01)
    queue.add("a")
    first.cancel()
    assert await asyncio.wait_for(second, 1) == "a"


def test_add_after_delays_and_earliest_wins() -> None:
    async def main() -> None:
        queue = new_queue()
        loop = asyncio.get_running_loop()
        start = loop.time()
        queue.add_after("a", 0.2)
        queue.add_after("a", 0.05)
        queue.add_after("a", 10)
        assert queue.pending_delayed == 1
        assert await queue.get() == "a"
        assert loop.time() - start == pytest.approx(0.05)
        assert queue.pending_delayed == 0

    run_on_virtual_clock(main())


async def test_add_after_non_positive_adds_now() -> None:
    queue = new_queue()
    queue.add_after("a", 0)
    assert queue.get_nowait() == "a"


def test_add_rate_limited_backs_off_and_forget_resets() -> None:
    async def main() -> None:
        queue = new_queue(rate_limiter=ItemExponentialRateLimiter(0.01, 0.03))
        loop = asyncio.get_running_loop()
        waits = []
        for _ in range(4):
            start = loop.time()
            queue.add_rate_limited("a")
            key = await queue.get()
            waits.append(loop.time() - start)
            queue.done(key)
        assert waits == pytest.approx([0.01, 0.02, 0.03, 0.03]), "doubling, capped at the max"
        assert queue.num_requeues("a") == 4
        queue.forget("a")
        assert queue.num_requeues("a") == 0
        start = loop.time()
        queue.add_rate_limited("a")
        await queue.get()
        assert loop.time() - start == pytest.approx(0.01), "forget starts the backoff afresh"

    run_on_virtual_clock(main())


def test_shut_down_stops_taking_work_and_wakes_getters() -> None:
    async def main() -> None:
        queue = new_queue()
        getter = asyncio.create_task(queue.get())
        await asyncio.sleep(0)
        queue.add_after("later", 0.01)
        queue.shut_down()
        with pytest.raises(QueueShutDown):
            await getter
        queue.add("a")
        queue.add_rate_limited("b")
        await asyncio.sleep(60)  # long past every delay: nothing may come back
        assert len(queue) == 0
        assert queue.pending_delayed == 0
        with pytest.raises(QueueShutDown):
            queue.get_nowait()

    run_on_virtual_clock(main())


def test_shut_down_with_drain_waits_for_in_flight_keys() -> None:
    async def main() -> None:
        queue = new_queue()
        queue.add("a")
        key = await queue.get()
        loop = asyncio.get_running_loop()
        start = loop.time()

        async def finish_later() -> None:
            await asyncio.sleep(0.5)
            queue.done(key)

        finisher = asyncio.create_task(finish_later())
        assert await queue.shut_down_with_drain(grace=1) is True
        assert loop.time() - start == pytest.approx(0.5), "returns as the last key finishes"
        assert queue.processing == frozenset()
        await finisher

    run_on_virtual_clock(main())


def test_shut_down_with_drain_gives_up_after_grace() -> None:
    async def main() -> None:
        queue = new_queue()
        queue.add("a")
        await queue.get()
        loop = asyncio.get_running_loop()
        start = loop.time()
        assert await queue.shut_down_with_drain(grace=2) is False
        assert loop.time() - start == pytest.approx(2)
        assert queue.processing == frozenset({"a"})
        queue.done("a")
        await queue.drain()

    run_on_virtual_clock(main())


def test_metrics_use_controller_runtime_names() -> None:
    run_on_virtual_clock(_check_metrics_names())


async def _check_metrics_names() -> None:
    registry = CollectorRegistry()
    loop = asyncio.get_running_loop()
    queue: WorkQueue[str] = WorkQueue("ctl", registry=registry, clock=loop.time)
    labels = {"name": "ctl", "controller": "ctl"}

    def value(name: str) -> float | None:
        return registry.get_sample_value(name, labels)

    queue.add("a")
    queue.add("a")
    queue.add("b")
    assert value("workqueue_adds_total") == 2
    assert value("workqueue_depth") == 2
    key = await queue.get()
    assert value("workqueue_depth") == 1
    assert value("workqueue_queue_duration_seconds_count") == 1
    await asyncio.sleep(3)
    assert value("workqueue_unfinished_work_seconds") == pytest.approx(3)
    assert value("workqueue_longest_running_processor_seconds") == pytest.approx(3)
    queue.done(key)
    assert value("workqueue_work_duration_seconds_count") == 1
    assert value("workqueue_unfinished_work_seconds") == 0
    queue.add_rate_limited("c")
    assert value("workqueue_retries_total") == 1
    queue.shut_down()
    assert value("workqueue_depth") == 0


async def test_queue_without_metrics_registers_nothing() -> None:
    registry = CollectorRegistry()
    queue: WorkQueue[str] = WorkQueue("quiet", metrics=False, registry=registry)
    queue.add("a")
    assert (
        registry.get_sample_value("workqueue_adds_total", {"name": "quiet", "controller": "quiet"})
        is None
    )
