"""The page in headless Chromium on a made-up 1,024-node cluster that moves: it draws every
node, colours each job's GPUs alike, marks reservations, and follows the event stream's deltas
in place, without a reload and without a console error."""

from __future__ import annotations

import time

import pytest

from _browser import GRID, check_grid, chromium
from crdkit.scheduling.ui.preview import PreviewView
from crdkit.scheduling.ui.server import ViewServer
from crdkit.testing import eventually

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


async def test_a_1024_node_page_follows_the_stream_in_place() -> None:
    view = PreviewView(1024, queues=True)
    server = ViewServer(view, "127.0.0.1:0")
    await server.start()
    try:
        async with chromium() as page:
            await page.get(server.url)

            async def showing(seq: int) -> bool:
                return int(await page.js("return document.body.dataset.seq")) >= seq

            await eventually(lambda: showing(1), what="the first snapshot drawn")
            await page.js("window.__loaded = true")
            check_grid(await page.js(GRID), dict(view.snapshot()))
            started = time.monotonic()
            for _ in range(5):
                await view.advance()
            await eventually(lambda: showing(view.seq), what="the deltas applied")
            print(f"5 deltas at 1,024 nodes shown {time.monotonic() - started:.2f} s later")
            grid = await page.js(GRID)
            assert grid["loaded"], "the page reloaded"
            assert grid["seq"] == view.seq
            check_grid(grid, dict(view.snapshot()))
            assert any(node["held"] for node in view.snapshot()["nodes"])
            # The line and the charts are drawn from the same state.
            rows = await page.js(
                "return document.querySelectorAll('#waiting tr[data-gang]').length"
            )
            assert rows == sum(g["state"] == "waiting" for g in view.snapshot()["gangs"])
            points = await page.js("return +document.querySelector('#timeline svg').dataset.points")
            assert points == len(view.snapshot()["timeline"])
            await page.screenshot("ui-preview-1024")
            # One quota row per queue, its bar as long as its use of its nominal quota.
            bars = await page.js(
                "return [...document.querySelectorAll('.quota')].map((q) => [q.dataset.queue,"
                " q.querySelector('.bar .used').style.width])"
            )
            queues = view.snapshot()["queues"]
            assert [name for name, _ in bars] == [q["name"] for q in queues]
            for (_, width), queue in zip(bars, queues, strict=True):
                quota = queue["resources"][0]
                whole = max(quota["nominal"], quota["used"], 1)
                expected = 100 * min(quota["used"], quota["nominal"]) / whole
                assert float(width.removesuffix("%")) == pytest.approx(expected, abs=0.01)
            # Clicking a gang lights its nodes and only those.
            gang = next(g["gang"] for g in view.snapshot()["gangs"] if g["state"] == "running")
            await page.js(
                "document.querySelector(`#running tr[data-gang='${arguments[0]}']`).click()", gang
            )
            lit = await page.js(
                "return [...document.querySelectorAll('.node.lit')].map((c) => c.dataset.node)"
            )
            assert sorted(lit) == sorted(
                n["name"]
                for n in view.snapshot()["nodes"]
                if any(s["job"] == gang for s in n["jobs"])
            )
            assert await page.console_errors() == []

            # The server goes and comes back on the same port: the page reconnects by itself
            # and catches up from the snapshot whole, still without a reload.
            port = server.port
            await server.close()
            await view.advance()
            server = ViewServer(view, f"127.0.0.1:{port}")
            await server.start()
            await eventually(lambda: showing(view.seq), what="the page caught up after a restart")
            grid = await page.js(GRID)
            assert grid["loaded"], "the page reloaded"
            check_grid(grid, dict(view.snapshot()))
            # Chromium logs the refused reconnection as an error; nothing else may be one.
            errors = await page.console_errors()
            assert all("/ui/events" in e["message"] for e in errors), errors
    finally:
        await server.close()
