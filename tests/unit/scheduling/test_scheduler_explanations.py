"""``GangScheduler`` on the fake cluster, on a manual clock: a waiting gang is explained once,
and again only when its gang or the placer's reason changed, or the explanation grew old; its
passes stay cheap however often capacity events wake it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from prometheus_client import CollectorRegistry

from crdkit.client import Client
from crdkit.resources import Node, Pod
from crdkit.runtime import Manager
from crdkit.scheduling import GangScheduler
from crdkit.testing import FakeCluster, eventually
from crdkit.testing.nodes import simulated_node


def gpu_pod(name: str, gpus: int) -> Pod:
    return Pod.model_validate(
        {
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {
                "schedulerName": "gangs",
                "containers": [
                    {"name": "c", "resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}
                ],
            },
        }
    )


async def add_node(client: Client, name: str) -> None:
    """An 8-GPU node, Ready: its status written through the status subresource, since the
    fake cluster (as the apiserver does for kinds with one) drops status on create."""
    node = simulated_node(name)
    await client.create(node)
    await client.patch(
        Node,
        name,
        {"status": node.model_dump(mode="json", by_alias=True)["status"]},
        subresource="status",
    )


@contextlib.asynccontextmanager
async def scheduling(now: list[float]) -> AsyncIterator[tuple[GangScheduler, FakeCluster]]:
    cluster = FakeCluster()
    async with cluster.client() as client:
        manager = Manager(
            client,
            metrics_bind_address="0",
            health_probe_bind_address="0",
            registry=CollectorRegistry(),
        )
        scheduler = GangScheduler("gangs", pod_groups=(), clock=lambda: now[0])
        manager.add_runnable(scheduler)
        task = asyncio.create_task(manager.run())
        try:
            await manager.wait_ready()
            yield scheduler, cluster
        finally:
            manager.stop()
            await asyncio.wait_for(task, 30)


async def test_a_waiting_gang_is_explained_again_only_when_it_can_have_changed() -> None:
    now = [0.0]
    async with scheduling(now) as (scheduler, cluster):
        client = cluster.client()
        async with client:
            await add_node(client, "n1")
            await client.create(gpu_pod("huge", 16))  # more than any node: never fits

            async def explained_once() -> bool:
                return scheduler.explanations == 1

            await eventually(explained_once, what="the huge pod explained")
            passes = scheduler.passes
            for i in range(2, 7):  # capacity events wake it; nothing it waits on changed
                await add_node(client, f"n{i}")

            async def woken() -> bool:
                # Capacity events between two passes make one pass: at least one ran.
                return len(scheduler.mirror.node_names()) == 6 and scheduler.passes > passes

            await eventually(woken, what="the new nodes seen and the gang placed again")
            assert scheduler.explanations == 1
            now[0] = 11.0  # the explanation is older than explain_refresh (10 s)
            await add_node(client, "n7")

            async def refreshed() -> bool:
                return scheduler.explanations == 2

            await eventually(refreshed, what="explained again once old")
