"""A ``GangScheduler`` running in a Manager on the fake cluster, with 8-GPU nodes and pods:
what the scheduler's unit tests share."""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Any

from crdkit.client import NotFound
from crdkit.resources import Node, Pod, resource_info
from crdkit.resources.queues import Queue
from crdkit.scheduling import GangScheduler
from crdkit.scheduling.groups import GROUP_APIS, PodGroupApi
from crdkit.testing import FakeCluster, FakeKind, running_manager
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


async def exists(client: Client, name: str) -> bool:
    """Whether pod ``name`` is still there."""
    try:
        await client.get(Pod, name, namespace=NAMESPACE)
    except NotFound:
        return False
    return True


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
    subresource, the coscheduling one has), or as kube-apiserver serves a built-in one."""
    adapter = GROUP_APIS[api]
    assert adapter.model is not None
    if adapter.crd_file is None:
        return FakeKind(
            resource_info(adapter.model), status_subresource=True, tracks_generation=True
        )
    return FakeKind.of_crd(adapter.model, status_subresource=adapter.status_subresource)


def pod_group_kinds(api: PodGroupApi) -> list[FakeKind]:
    """The kinds the scheduler watches for ``api``: its PodGroup and its companion's."""
    companion = GROUP_APIS[api].companion
    extra = (
        []
        if companion is None
        else [FakeKind(resource_info(companion), False, True, has_status=False)]
    )
    return [pod_group_kind(api), *extra]


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
    kinds = [kind for api in pod_groups for kind in pod_group_kinds(api)]
    if options.get("queues"):
        kinds.append(FakeKind.of_crd(Queue, status_subresource=True))
    cluster = FakeCluster(kinds=kinds)
    scheduler = GangScheduler(SCHEDULER, levels, pod_groups=pod_groups, clock=clock, **options)
    async with cluster.client() as client, running_manager(client, scheduler, stop_timeout=30):
        yield scheduler, client
