"""``GangScheduler``'s queue on the fake cluster: within a priority the gang that arrived first
goes first, whatever its name, and a pod held by scheduling gates waits until they are gone."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from prometheus_client import CollectorRegistry

from crdkit.client import Client
from crdkit.resources import Node, Pod
from crdkit.runtime import Manager
from crdkit.scheduling import GangScheduler
from crdkit.testing import FakeCluster, eventually
from crdkit.testing.nodes import simulated_node


def gpu_pod(name: str, **spec: Any) -> Pod:
    return Pod.model_validate(
        {
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {
                "schedulerName": "gangs",
                "containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "8"}}}],
                **spec,
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
async def scheduling() -> AsyncIterator[tuple[GangScheduler, Client]]:
    cluster = FakeCluster()
    async with cluster.client() as client:
        manager = Manager(
            client,
            metrics_bind_address="0",
            health_probe_bind_address="0",
            registry=CollectorRegistry(),
        )
        scheduler = GangScheduler("gangs", pod_groups=())
        manager.add_runnable(scheduler)
        task = asyncio.create_task(manager.run())
        try:
            await manager.wait_ready()
            yield scheduler, client
        finally:
            manager.stop()
            await asyncio.wait_for(task, 30)


async def node_of(client: Client, name: str) -> str | None:
    return (await client.get(Pod, name, namespace="ml")).spec.node_name


async def test_within_a_priority_the_first_to_arrive_goes_first_not_the_first_name() -> None:
    async with scheduling() as (scheduler, client):
        first = await client.create(gpu_pod("zz-first"))
        # creationTimestamp has whole seconds: the second pod is made a second later.
        probes = 0
        while True:
            probes += 1
            probe = await client.create(gpu_pod(f"probe-{probes}", schedulerName="other"))
            if probe.metadata.creation_timestamp != first.metadata.creation_timestamp:
                break
            await asyncio.sleep(0.2)
        await client.create(gpu_pod("aa-later"))

        async def both_waiting() -> bool:
            return scheduler.explanations >= 2

        await eventually(both_waiting, what="both pods waiting for a node")
        await add_node(client, "n1")  # room for one

        async def one_bound() -> bool:
            return await node_of(client, "zz-first") is not None

        await eventually(one_bound, what="the first to arrive bound")
        assert await node_of(client, "aa-later") is None


async def test_a_gated_pod_waits_for_its_gates_to_be_removed() -> None:
    async with scheduling() as (_, client):
        await add_node(client, "n1")
        gate = {"name": "kueue.x-k8s.io/admission"}
        await client.create(gpu_pod("gated", schedulingGates=[gate]))
        await client.create(gpu_pod("free"))

        async def free_bound() -> bool:
            return await node_of(client, "free") is not None

        await eventually(free_bound, what="the ungated pod bound")
        assert await node_of(client, "gated") is None
        await client.delete(Pod, "free", namespace="ml", grace_period_seconds=0)
        await client.patch(Pod, "gated", {"spec": {"schedulingGates": None}}, namespace="ml")

        async def gated_bound() -> bool:
            return await node_of(client, "gated") is not None

        await eventually(gated_bound, what="the pod bound once its gate is removed")
