"""``crdkit scheduler --ui`` end to end: a GangScheduler on the real apiserver, its
SchedulerView and the page's server, and the page in headless Chromium.

Three racks of two 8-GPU nodes: a PyTorchJob gang binds a whole rack, one small pod sits in
each other rack, and a second whole-rack gang waits with a reservation on one of them. The page
must draw one cell per node, paint the bound gang's colour on exactly its GPUs, mark the held
rack, and, when a pod of the bound gang goes, grey its GPUs from the event stream without a
reload, with no console error throughout.

Nothing runs a kubelet: a pod "finishes" by being deleted.
"""

from __future__ import annotations

from typing import Any

import pytest
from _cluster import LEVELS, POOL, all_bound, create_job, pods_of, pool_with_nodes, small_pod

from _browser import GRID, check_grid, chromium
from crdkit.client import Client
from crdkit.resources import Pod
from crdkit.scheduling import GangScheduler
from crdkit.scheduling.ui.server import ViewServer
from crdkit.scheduling.view.snapshot import SchedulerView
from crdkit.testing import ControlPlane, eventually, running_manager

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(240)]

HOST = "kubernetes.io/hostname"

# The grid and the state it was drawn from, read in one script so that no update falls between.
GRID_AND_STATE = GRID.replace("return out;", "out.state = window.crdkitUi.state(); return out;")


async def test_the_page_shows_the_scheduler_live(scheduling_plane: ControlPlane) -> None:
    async with chromium() as page, Client.from_control_plane(scheduling_plane) as client:
        pool, nodes, name = await pool_with_nodes(
            client, scheduling_plane, {"a": 2, "b": 2, "c": 2}
        )
        scheduler = GangScheduler(name, LEVELS, node_selector=f"{POOL}={pool}")
        view = SchedulerView(scheduler, interval=0.2, publish=False)
        server = ViewServer(view, "127.0.0.1:0")
        async with running_manager(client, scheduler, view, server):
            await create_job(client, pool, "train", 1, scheduler=name)
            await eventually(lambda: all_bound(client, pool, "train"), what="train bound")
            train_nodes = {p.spec.node_name for p in await pods_of(client, pool, "train")}
            train_rack = next(iter(train_nodes)).rsplit("-n", 1)[0]  # type: ignore[union-attr]
            # One small pod in each other rack: no rack is free for the next whole-rack gang.
            others = [n for n in nodes if not n.startswith(f"{train_rack}-")]
            for index, node in enumerate(others[::2]):
                await client.create(small_pod(f"s{index}", pool, name, nodeSelector={HOST: node}))
            await eventually(lambda: all_bound(client, pool, "s"), what="the small pods bound")
            await create_job(client, pool, "big", 1, scheduler=name)

            def reserved() -> bool:
                return bool(scheduler.reservations)

            await eventually(reserved, what="big holding a rack")
            (reservation,) = scheduler.reservations.values()
            held = {n for n in nodes if n.startswith(f"{reservation.domain}-")}
            assert len(held) == 2

            await page.get(server.url)

            async def read() -> dict[str, Any]:
                grid: dict[str, Any] = await page.js(GRID_AND_STATE)
                return grid

            async def shows_the_reservation() -> bool:
                grid = await read()
                return {n for n, c in grid["nodes"].items() if c["held"]} == held

            await eventually(shows_the_reservation, what="the page marking the held rack")
            await page.js("window.__loaded = true")
            grid = await read()
            check_grid(grid, grid["state"])  # the grid draws the state it holds, exactly
            assert sorted(grid["nodes"]) == sorted(nodes)  # one cell per node
            train = f"{pool}/train"
            on = {n for n, c in grid["nodes"].items() if train in c["jobs"]}
            assert on == train_nodes
            for node in train_nodes:
                cell = grid["nodes"][node]
                assert cell["jobs"] == [train] * 8
            colours = {
                colour
                for cell in grid["nodes"].values()
                for job, colour in zip(cell["jobs"], cell["colours"], strict=True)
                if job == train
            }
            assert len(colours) == 1
            (train_colour,) = colours
            assert all(
                colour != train_colour
                for n, cell in grid["nodes"].items()
                if n not in train_nodes
                for colour in cell["colours"]
            )
            assert {c["held"] for c in grid["nodes"].values() if c["held"]} == {f"{pool}/big"}
            titles = await page.js(
                "return [...document.querySelectorAll('[data-held]')].map((c) => c.title)"
            )
            assert all("held for" in title for title in titles)
            waiting = await page.js(
                "return [...document.querySelectorAll('#waiting tr[data-gang]')]"
                ".map((r) => r.dataset.gang)"
            )
            assert f"{pool}/big" in waiting
            await page.screenshot("ui-live-before")

            # A pod of the bound gang goes: its node's GPUs turn grey, in place.
            seq = grid["seq"]
            gone = sorted(train_nodes)[0]
            (pod,) = [p for p in await pods_of(client, pool, "train") if p.spec.node_name == gone]
            await client.delete(
                Pod, pod.metadata.name or "", namespace=pool, grace_period_seconds=0
            )

            async def freed() -> bool:
                grid = await read()
                return grid["nodes"][gone]["jobs"] == [None] * 8

            await eventually(freed, what="the freed GPUs grey on the page")
            grid = await read()
            assert grid["loaded"], "the page reloaded instead of applying the stream"
            assert grid["seq"] > seq
            assert set(grid["nodes"][gone]["colours"]) == {grid["free"]}
            check_grid(grid, grid["state"])
            await page.screenshot("ui-live-after")
            assert await page.console_errors() == []
