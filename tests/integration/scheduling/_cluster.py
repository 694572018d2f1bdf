"""What the scheduling tests build on the apiserver: simulated nodes in racks, pods made the
way Kubeflow's training-operator makes a PyTorchJob's, and a running scheduler."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any, NamedTuple

import factories
from crdkit.client import Client
from crdkit.resources import Event, Pod
from crdkit.scheduling import GangScheduler
from crdkit.scheduling.groups import PodGroupApi
from crdkit.scheduling.groups.coscheduling import CoschedulingPodGroup
from crdkit.scheduling.groups.volcano import VolcanoPodGroup
from crdkit.testing import ControlPlane, create_nodes, running_manager, simulated_node

BLOCK, RACK = "example.com/block", "example.com/rack"
LEVELS = [BLOCK, RACK]
POOL = "crdkit.io/test-pool"


def new_pool() -> str:
    return f"p{uuid.uuid4().hex[:8]}"


async def make_nodes(
    client: Client, pool: str, racks: dict[str, int], *, gpus: int = 8, cpus: int = 32
) -> list[str]:
    """Ready, untainted nodes, ``racks[rack]`` of them in each rack (all in block b1),
    labelled with the pool; their names."""
    nodes = [
        simulated_node(
            f"{pool}-{rack}-n{index}",
            labels={POOL: pool, BLOCK: "b1", RACK: f"{pool}-{rack}"},
            allocatable={"cpu": cpus, "memory": "256Gi", "nvidia.com/gpu": gpus, "pods": 110},
        )
        for rack, count in racks.items()
        for index in range(count)
    ]
    return [node.metadata.name or "" for node in await create_nodes(client, nodes)]


class Pool(NamedTuple):
    """A test's own part of the shared plane: the pool's name (also its namespace), its nodes,
    and the name of the scheduler the test runs for them."""

    name: str
    nodes: list[str]
    scheduler: str


async def pool_with_nodes(client: Client, plane: ControlPlane, racks: dict[str, int]) -> Pool:
    """A new pool: its namespace, and the nodes of `make_nodes` in ``racks``."""
    pool = new_pool()
    await plane.create_namespace(pool)
    nodes = await make_nodes(client, pool, racks)
    return Pool(pool, nodes, f"sched-{pool}")


def pytorchjob_pods(
    job: str,
    namespace: str,
    workers: int,
    *,
    scheduler: str,
    group: str,
    gpus: int = 8,
    **spec: Any,
) -> list[Pod]:
    """A PyTorchJob's pods as training-operator v1 creates them: one master and ``workers``
    workers, with its labels, and the gang membership of ``group`` (``volcano``: the
    ``scheduling.k8s.io/group-name`` annotation, ``coscheduling``: the pod-group label);
    ``spec``: more of each pod's spec (camelCase: ``affinity``, ``priorityClassName``)."""
    joins: dict[str, tuple[PodGroupApi, str]] = {
        "volcano": ("volcano", job),
        "coscheduling": ("coscheduling", job),
    }
    pods = []
    for role, count in (("master", 1), ("worker", workers)):
        for index in range(count):
            labels = {
                "training.kubeflow.org/job-name": job,
                "training.kubeflow.org/operator-name": "pytorchjob-controller",
                "training.kubeflow.org/replica-type": role,
                "training.kubeflow.org/replica-index": str(index),
            }
            made = factories.pod(
                f"{job}-{role}-{index}",
                namespace=namespace,
                labels=labels,
                pod_group=joins.get(group),
                scheduler=scheduler,
                container="pytorch",
                image="docker.io/kubeflowkatib/pytorch-mnist:v1",
                requests={"cpu": "4"},
                gpus=gpus,
                limits={"nvidia.com/gpu": str(gpus)},
                restartPolicy="OnFailure",
                **spec,
            )
            pods.append(made)
    return pods


def small_pod(name: str, namespace: str, scheduler: str, **spec: Any) -> Pod:
    """A pod of one whole 8-GPU node in no group (a gang of one), made valid for the apiserver
    (an image, GPU limits); ``spec``: more of its spec (camelCase: ``nodeSelector``)."""
    return factories.pod(
        name,
        namespace=namespace,
        scheduler=scheduler,
        image="registry.k8s.io/pause:3.10",
        gpus=8,
        limits={"nvidia.com/gpu": "8"},
        **spec,
    )


def volcano_podgroup(
    name: str, namespace: str, min_member: int, *, tier: int | None = None, **spec: Any
) -> VolcanoPodGroup:
    return factories.volcano_podgroup(
        name, min_member, namespace=namespace, tier=tier, queue="default", **spec
    )


def coscheduling_podgroup(name: str, namespace: str, min_member: int) -> CoschedulingPodGroup:
    return factories.coscheduling_podgroup(
        name, min_member, namespace=namespace, scheduleTimeoutSeconds=60
    )


async def create_all(client: Client, objects: Sequence[Any]) -> None:
    for obj in objects:
        await client.create(obj)


async def create_job(
    client: Client,
    namespace: str,
    job: str,
    workers: int,
    *,
    scheduler: str,
    group: PodGroupApi = "volcano",
    min_member: int | None = None,
    tier: int | None = 1,
    min_task_member: dict[str, int] | None = None,
    gpus: int = 8,
    **spec: Any,
) -> list[Pod]:
    """A PyTorchJob's PodGroup of ``group`` and its pods (`pytorchjob_pods`, with ``spec``),
    created in that order as a workload's controller creates them; the pods. The group asks
    for ``min_member`` pods, all of them unless given; a Volcano one keeps the gang within
    ``tier`` and asks for ``min_task_member`` pods of each task given."""
    pods = pytorchjob_pods(
        job, namespace, workers, scheduler=scheduler, group=group, gpus=gpus, **spec
    )
    needed = len(pods) if min_member is None else min_member
    podgroup: VolcanoPodGroup | CoschedulingPodGroup = (
        volcano_podgroup(job, namespace, needed, tier=tier, minTaskMember=min_task_member)
        if group == "volcano"
        else coscheduling_podgroup(job, namespace, needed)
    )
    await create_all(client, [podgroup, *pods])
    return pods


async def has_event(
    client: Client,
    namespace: str,
    *,
    about: str | None = None,
    reason: str | None = None,
    note: str = "",
) -> bool:
    """Whether an Event in ``namespace`` is about the object named ``about`` (any, if None),
    with ``reason`` (any, if None) and a note that contains ``note``: what the scheduler told."""
    events = await client.list(Event, namespace=namespace)
    return any(
        (about is None or (e.regarding is not None and e.regarding.name == about))
        and (reason is None or e.reason == reason)
        and note in (e.note or "")
        for e in events.items
    )


async def pods_of(client: Client, namespace: str, prefix: str = "") -> list[Pod]:
    pods = await client.list(Pod, namespace=namespace)
    return sorted(
        (p for p in pods.items if (p.metadata.name or "").startswith(prefix)),
        key=lambda p: p.metadata.name or "",
    )


async def bound_count(client: Client, namespace: str, prefix: str) -> int:
    return sum(1 for p in await pods_of(client, namespace, prefix) if p.spec.node_name)


async def bound_count_is(client: Client, namespace: str, prefix: str, count: int) -> bool:
    return await bound_count(client, namespace, prefix) == count


async def all_bound(client: Client, namespace: str, prefix: str) -> bool:
    """Whether there are such pods and every one of them is bound."""
    pods = await pods_of(client, namespace, prefix)
    return bool(pods) and all(p.spec.node_name for p in pods)


async def bound_nodes(client: Client, namespace: str, prefix: str = "") -> list[str | None]:
    return [p.spec.node_name for p in await pods_of(client, namespace, prefix)]


@contextlib.asynccontextmanager
async def running_scheduler(
    client: Client, pool: str, name: str, **options: Any
) -> AsyncIterator[GangScheduler]:
    """A Manager running a `GangScheduler` named ``name`` on the pool's nodes."""
    scheduler = GangScheduler(name, LEVELS, node_selector=f"{POOL}={pool}", **options)
    async with running_manager(client, scheduler):
        yield scheduler
