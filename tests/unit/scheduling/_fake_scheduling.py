"""A ``GangScheduler`` running in a Manager on the fake cluster, with 8-GPU nodes and pods:
what the scheduler's unit tests share."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry

from crdkit.resources import Node, Pod, resource_info
from crdkit.runtime import Manager
from crdkit.scheduling import GangScheduler
from crdkit.scheduling.groups import GROUP_APIS, PodGroupApi
from crdkit.testing import FakeCluster, FakeKind
from crdkit.testing.sim.nodes import simulated_node

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Sequence

    from crdkit.client import Client

SCHEDULER = "gangs"
NAMESPACE = "ml"


def gpu_pod(name: str, gpus: int = 8, **spec: Any) -> Pod:
    """A pod of ``gpus`` GPUs for the scheduler (``spec`` fields override)."""
    return Pod.model_validate(
        {
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {
                "schedulerName": SCHEDULER,
                "containers": [
                    {"name": "c", "resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}
                ],
                **spec,
            },
        }
    )


async def add_node(client: Client, name: str, labels: dict[str, str] | None = None) -> None:
    """An 8-GPU node, Ready: its status written through the status subresource, since the
    fake cluster (as the apiserver does for kinds with one) drops status on create."""
    node = simulated_node(name, labels=labels)
    await client.create(node)
    await client.patch(
        Node,
        name,
        {"status": node.model_dump(mode="json", by_alias=True)["status"]},
        subresource="status",
    )


def pod_group_kind(api: PodGroupApi) -> FakeKind:
    """The PodGroup kind of ``api`` as its upstream CRD serves it (Volcano's CRD has no status
    subresource, the coscheduling one has)."""
    adapter = GROUP_APIS[api]
    assert adapter.model is not None
    return FakeKind(
        info=resource_info(adapter.model),
        status_subresource=adapter.status_subresource,
        tracks_generation=True,
        typed_list_items=True,
    )


@contextlib.asynccontextmanager
async def scheduling(
    clock: Callable[[], float] = time.monotonic,
    *,
    pod_groups: Sequence[PodGroupApi] = (),
    levels: Sequence[str] = (),
    **options: Any,
) -> AsyncIterator[tuple[GangScheduler, Client]]:
    """The scheduler running and a client; without ``pod_groups`` every pod is a gang of one.
    ``options``: more of `GangScheduler`'s keyword arguments."""
    cluster = FakeCluster(kinds=[pod_group_kind(api) for api in pod_groups])
    async with cluster.client() as client:
        manager = Manager(
            client,
            metrics_bind_address="0",
            health_probe_bind_address="0",
            registry=CollectorRegistry(),
        )
        scheduler = GangScheduler(SCHEDULER, levels, pod_groups=pod_groups, clock=clock, **options)
        manager.add_runnable(scheduler)
        task = asyncio.create_task(manager.run())
        try:
            await manager.wait_ready()
            yield scheduler, client
        finally:
            manager.stop()
            await asyncio.wait_for(task, 30)
