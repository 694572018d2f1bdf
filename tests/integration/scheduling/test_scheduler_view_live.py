"""The scheduler's view on the real apiserver: a running gang with a declared end, a gang that
waits for its rack with a reservation and an expected start at that end, and a gang that never
fits; the snapshot shows each where it is, and the published ConfigMap carries the queue.

Nothing runs a kubelet: a pod "finishes" by being deleted.
"""

from __future__ import annotations

import json
import time

import pytest
from _cluster import LEVELS, POOL, create_job, has_event, pool_with_nodes, small_pod

from crdkit.client import Client
from crdkit.resources import ConfigMap, Pod
from crdkit.scheduling import GangScheduler
from crdkit.scheduling.view.format import FORMAT, PUBLISHED_KEY, published_name
from crdkit.scheduling.view.published import read_config_map_data
from crdkit.scheduling.view.snapshot import SchedulerView
from crdkit.scheduling.view.table import queue_table
from crdkit.testing import ControlPlane, eventually, running_manager

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

HOST = "kubernetes.io/hostname"
RUN_SECONDS = 600


def _gang(view: SchedulerView, name: str) -> dict[str, object] | None:
    return next((dict(g) for g in view.snapshot()["gangs"] if g["gang"].endswith(f"/{name}")), None)


async def test_the_view_shows_jobs_reservations_expected_starts_and_publishes_the_queue(
    scheduling_plane: ControlPlane,
) -> None:
    async with Client.from_control_plane(scheduling_plane) as client:
        pool, nodes, name = await pool_with_nodes(client, scheduling_plane, {"a": 2, "b": 2})
        scheduler = GangScheduler(name, LEVELS, node_selector=f"{POOL}={pool}")
        view = SchedulerView(scheduler, interval=0.2, publish_every=0.2)
        async with running_manager(client, scheduler, view):
            # A whole rack runs a gang that declares its end; one node of the other rack a
            # pod that declares none.
            started = time.time()
            await create_job(
                client, pool, "run", 1, scheduler=name, activeDeadlineSeconds=RUN_SECONDS
            )
            await eventually(lambda: (_gang(view, "run") or {}).get("state") == "running")
            small = small_pod("small", pool, name, nodeSelector={HOST: nodes[3]})
            await client.create(small)
            # A gang that needs a whole rack waits for the first to end; one that needs more
            # than a rack never fits.
            await create_job(client, pool, "big", 1, scheduler=name)
            await create_job(client, pool, "huge", 2, scheduler=name)
            await eventually(
                lambda: has_event(client, pool, about="huge-master-0", reason="FailedScheduling")
            )
            await eventually(lambda: (_gang(view, "big") or {}).get("reserved") is not None)
            await eventually(lambda: (_gang(view, "huge") or {}).get("never_fits") is True)

            snapshot = view.refresh()
            assert snapshot["format"] == FORMAT
            assert snapshot["levels"] == LEVELS
            cells = {node["name"]: node for node in snapshot["nodes"]}
            assert sorted(cells) == sorted(nodes)  # one cell per node of the pool
            run = {"job": f"{pool}/run", "amount": 8}
            run_nodes = {n for n, node in cells.items() if run in node["jobs"]}
            assert len(run_nodes) == 2
            assert len({cells[n]["path"][1] for n in run_nodes}) == 1  # in one rack
            held = {n for n, node in cells.items() if node["held"] == f"{pool}/big"}
            assert held == run_nodes  # the rack that frees first, by the declared end
            big = _gang(view, "big")
            huge = _gang(view, "huge")
            assert big is not None
            assert huge is not None
            assert big["state"] == "waiting"
            assert big["position"] == 1
            assert big["reason"]
            start = big["expected_start"]
            assert isinstance(start, float)
            assert started + RUN_SECONDS - 5 <= start <= time.time() + RUN_SECONDS + 5
            assert big["promised"] == start
            # No place in line and no start for a gang waiting will not help.
            assert huge["position"] is None
            assert huge["expected_start"] is None
            assert huge["reserved"] is None
            assert str(huge["reason"]).startswith("never fits")
            point = snapshot["timeline"][-1]
            # Held: the rack for big; bound: the run gang and the small pod (a gang of one).
            assert (point["held"], point["bound"], point["total"]) == (16, 24, 32)

            async def published() -> dict[str, object] | None:
                try:
                    made = await client.get(ConfigMap, published_name(name), namespace="default")
                except Exception:
                    return None
                return json.loads((made.data or {})[PUBLISHED_KEY])  # type: ignore[no-any-return]

            async def queue_published() -> bool:
                shown = await published()
                gangs = [] if shown is None else shown["gangs"]
                return any(g["gang"] == f"{pool}/big" and g["reserved"] for g in gangs)  # type: ignore[attr-defined,index]

            await eventually(queue_published, what="the queue published")
            shown = await published()
            assert shown is not None
            assert "nodes" not in shown
            assert "timeline" not in shown
            # What crdkit queue reads of it, and one row per gang, in line order.
            made = await client.get(ConfigMap, published_name(name), namespace="default")
            read = read_config_map_data(made.data, f"default/{published_name(name)}")
            lines = queue_table(read, now=time.time(), width=100)
            print("\n".join(lines))
            assert all(len(line) <= 100 for line in lines)
            rows = [line.split() for line in lines[1:]]
            mine = [row for row in rows if any(cell.startswith(f"{pool}/") for cell in row)]
            by_gang = {row[2]: row for row in mine}
            # PRIORITY, POS, GANG: big is first in line; huge, which never fits, has no place.
            assert by_gang[f"{pool}/big"][1] == "1"
            assert by_gang[f"{pool}/huge"][1] == "-"

            # The running gang ends: the view moves without being asked.
            seq = view.seq
            for pod in ("run-master-0", "run-worker-0"):
                await client.delete(Pod, pod, namespace=pool, grace_period_seconds=0)
            await eventually(lambda: (_gang(view, "big") or {}).get("state") == "running")
            assert view.seq > seq
            assert any(s["gang"] == f"{pool}/big" for s in view.snapshot()["starts"])
