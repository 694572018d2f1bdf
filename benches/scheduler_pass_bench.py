"""A scheduling pass over a saturated queue: JSON on stdout.

Every node of a simulated GPU cluster is full, and hundreds of single-pod gangs wait (each asks
for a whole 8-GPU node). A capacity event (one more node) wakes every waiting gang; the pass
places them all (the Rust placer, one batch) and says why each still waits. With
``--explain-refresh 0`` every pass explains every gang again, as the scheduler did before it
kept explanations whose gang and placer reason had not changed.

    python benches/scheduler_pass_bench.py --nodes 1024 --waiting 600 --passes 5

Runs on the in-memory FakeCluster: it measures the scheduler, not an apiserver.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

from prometheus_client import CollectorRegistry

from crdkit.client import Client
from crdkit.resources import Node, Pod
from crdkit.runtime import Manager
from crdkit.scheduling import GangScheduler
from crdkit.testing import FakeCluster
from crdkit.testing.sim.nodes import simulated_node

LEAF = "topology.crdkit.io/leaf"


def gpu_pod(name: str, node: str | None = None, memory_mi: int | None = None) -> Pod:
    requests = {"nvidia.com/gpu": "8"}
    if memory_mi is not None:
        requests["memory"] = f"{memory_mi}Mi"
    spec: dict[str, Any] = {
        "schedulerName": "gangs",
        "containers": [{"name": "c", "resources": {"requests": requests}}],
    }
    if node is not None:
        spec["nodeName"] = node
    return Pod.model_validate({"metadata": {"name": name, "namespace": "ml"}, "spec": spec})


async def add_node(client: Client, node: Node) -> None:
    """Create ``node`` with its status: the fake cluster, like the apiserver, drops status on
    create, and a node without allocatable or a Ready condition takes no pod at all."""
    await client.create(node)
    status = node.model_dump(mode="json", by_alias=True)["status"]
    await client.patch(Node, node.metadata.name or "", {"status": status}, subresource="status")


async def measure(
    nodes: int, waiting: int, passes: int, refresh: float, alike: bool = True
) -> dict[str, Any]:
    """``alike``: every waiting gang asks the same; otherwise each asks a different amount of
    memory, so no two share an answer."""
    cluster = FakeCluster()
    async with cluster.client() as client:
        for i in range(nodes):
            labels = {LEAF: f"l{i // 16}"}
            await add_node(client, simulated_node(f"n{i:05}", labels=labels))
            await client.create(gpu_pod(f"running-{i}", node=f"n{i:05}"))  # the node is full
        manager = Manager(
            client,
            metrics_bind_address="0",
            health_probe_bind_address="0",
            registry=CollectorRegistry(),
        )
        scheduler = GangScheduler("gangs", [LEAF], pod_groups=(), explain_refresh=refresh)
        manager.add_runnable(scheduler)
        task = asyncio.create_task(manager.run())
        try:
            await manager.wait_ready()
            for i in range(waiting):
                memory = None if alike else i + 1
                await client.create(gpu_pod(f"waiting-{i:05}", memory_mi=memory))
            while len(scheduler.queue()) < waiting:  # noqa: ASYNC110 - polls the scheduler
                await asyncio.sleep(0.05)
            times = []
            explained = scheduler.explanations
            for round_ in range(passes):
                before = scheduler.passes
                # A node too small for any of them: capacity grew, nothing fits.
                small = simulated_node(f"small-{round_}", allocatable={"cpu": "4", "pods": "10"})
                await add_node(client, small)
                while scheduler.passes == before:  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
                while scheduler.passes != before + 1:  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
                times.append(scheduler.last_pass_seconds)
            explained = scheduler.explanations - explained
        finally:
            manager.stop()
            await asyncio.wait_for(task, 60)
    return {
        "nodes": nodes,
        "waiting": waiting,
        "explain_refresh_s": refresh,
        "gangs": "alike" if alike else "all different",
        "pass_ms_median": round(statistics.median(times) * 1e3, 1),
        "pass_ms_max": round(max(times) * 1e3, 1),
        "explanations_in_measured_passes": explained,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--waiting", type=int, default=600)
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = [
        asyncio.run(measure(args.nodes, args.waiting, args.passes, refresh, alike))
        for refresh in (10.0, 0.0)
        for alike in (True, False)
    ]
    print(
        json.dumps(
            {
                "bench": "scheduler_pass",
                "rows": rows,
                "seconds": round(time.perf_counter() - started),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
