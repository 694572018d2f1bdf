"""The controller's queue priorities on FakeCluster and a virtual clock: after a restart with
10,000 objects, a change made now is reconciled before almost all of the initial list."""

from __future__ import annotations

import asyncio
from typing import Any

from _recording import NS, Recorder, recording_manager

from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.runtime.informer_handlers import event_origin
from crdkit.testing import FakeCluster, eventually
from crdkit.testing.sim.virtual_time import run_on_virtual_clock

OBJECTS = 10_000
WORK_S = 0.01  # virtual seconds per reconcile: the backlog takes 100 s to work through


def configmap(name: str, value: str = "1") -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace=NS), data={"v": value})


async def _restart_then_change() -> tuple[list[str], str]:
    cluster = FakeCluster([configmap(f"cm-{i:05d}") for i in range(OBJECTS)])
    recorder = Recorder(WORK_S)
    async with cluster.client() as client:
        manager = recording_manager(client, recorder)
        task = asyncio.create_task(manager.run())
        try:

            async def started() -> bool:
                return len(recorder.at) >= 10

            await eventually(started, 600, "the first reconciles of the initial list")
            changed = f"{NS}/cm-{OBJECTS - 1:05d}"  # the last of the list, by name
            await client.patch(ConfigMap, changed.split("/")[1], {"data": {"v": "2"}}, namespace=NS)

            async def reconciled_after_change() -> bool:
                return recorder.order.count(changed) >= 1 and recorder.order.index(changed) >= 10

            await eventually(reconciled_after_change, 600, "the changed object reconciled")
        finally:
            manager.stop()
            await asyncio.wait_for(task, 600)
    return recorder.order, changed


def test_a_fresh_change_goes_before_95_percent_of_the_initial_list() -> None:
    order, changed = run_on_virtual_clock(_restart_then_change())
    assert order.index(changed) < OBJECTS * 0.05, order.index(changed)


def test_handlers_are_told_the_events_origin() -> None:
    async def main() -> list[tuple[str, Any]]:
        from crdkit.runtime import Informer

        seen: list[tuple[str, Any]] = []
        cluster = FakeCluster([configmap("a")])
        async with cluster.client() as client:
            informer = Informer(client, ConfigMap, namespace=NS, resync_period=5.0)
            informer.add_event_handler(
                on_add=lambda o: seen.append(("add", event_origin())),
                on_update=lambda old, new: seen.append(("update", event_origin())),
            )
            await informer.start()
            try:
                assert await informer.wait_for_sync(30)
                await client.create(configmap("b"))
                await eventually(lambda: _async(len(seen) >= 2), 30, "the add of b")
                await asyncio.sleep(6)  # one resync period (virtual)
                await eventually(lambda: _async(len(seen) >= 4), 30, "the resync")
            finally:
                await informer.stop()
        assert event_origin() == "change"  # outside a handler
        return seen

    seen = run_on_virtual_clock(main())
    assert seen[:2] == [("add", "initial-list"), ("add", "change")]
    assert set(seen[2:]) == {("update", "resync")}


async def _async(value: bool) -> bool:
    return value


async def _overload(max_wait: float | None) -> dict[str, float]:
    """2,000 initial-list keys at low priority, then 2x more fresh changes (20 hot keys) than
    one worker can take, for 60 virtual seconds: when each low key was handed out."""
    from crdkit.runtime.queue import PRIORITY_LOW, WorkQueue

    loop = asyncio.get_running_loop()
    queue: WorkQueue[str] = WorkQueue("overload", metrics=False, clock=loop.time, max_wait=max_wait)
    for i in range(2000):
        queue.add(f"low-{i}", PRIORITY_LOW)
    served: dict[str, float] = {}
    end = loop.time() + 60

    async def changes() -> None:
        n = 0
        while loop.time() < end:
            queue.add(f"hot-{n % 20}")
            n += 1
            await asyncio.sleep(WORK_S / 2)

    async def worker() -> None:
        while loop.time() < end:
            key = await queue.get()
            if key.startswith("low-"):
                served[key] = loop.time()
            await asyncio.sleep(WORK_S)
            queue.done(key)

    await asyncio.gather(changes(), worker())
    return served


def test_under_sustained_overload_no_key_starves() -> None:
    # Without a bound (controller-runtime's queue) the fresh changes keep every initial-list
    # key waiting as long as the overload lasts; with it, each is served, in its turn among
    # the keys that reached the bound: within the bound plus the time to serve those ahead.
    assert run_on_virtual_clock(_overload(None)) == {}
    served = run_on_virtual_clock(_overload(5.0))
    assert len(served) == 2000
    for i in range(2000):
        assert served[f"low-{i}"] <= 5.0 + (i + 1) * WORK_S + WORK_S
