"""Putting the simulated cluster into an apiserver, and reading its picture back out of it.

:func:`install_crds` installs the Job CRD (generated from `models.py`) and Volcano's PodGroup
CRD (a copy of upstream's, see ``config/crd/``).
:func:`create_simulated_cluster` registers the Node objects (as kubelets would) and the
PriorityClasses the demo's jobs name. :func:`read_picture_data` reads nodes and pods back from the
API, so the topology picture shows what the apiserver holds.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from crdkit.client import AlreadyExists, Client, GroupVersionKind, NotFound
from crdkit.resources import Node, Pod
from crdkit.scheduling import VolcanoPodGroup, pod_holds_capacity, pod_requests
from examples.gang_scheduler.job_stream import PRIORITY_CLASSES
from examples.gang_scheduler.models import Job
from examples.gang_scheduler.picture import JobUsage, NodeCell
from examples.gang_scheduler.pods import JOB_NAME_LABEL
from examples.gang_scheduler.simulated_cluster import (
    GPU_RESOURCE,
    RDMA_LABEL,
    SIMULATED_LABEL,
    ClusterShape,
    node_manifests,
)
from examples.gang_scheduler.topology import TopologyConfig

CREATE_CONCURRENCY = 32


async def _create_ignoring_existing(client: Client, obj: dict[str, Any]) -> None:
    # A second run against the same apiserver finds its own objects: that is fine.
    with contextlib.suppress(AlreadyExists):
        await client.create(obj)


async def create_all(client: Client, objects: Sequence[dict[str, Any]]) -> None:
    """Create every object, a bounded number at a time; existing ones are left as they are."""
    gate = asyncio.Semaphore(CREATE_CONCURRENCY)

    async def one(obj: dict[str, Any]) -> None:
        async with gate:
            await _create_ignoring_existing(client, obj)

    async with asyncio.TaskGroup() as group:
        for obj in objects:
            group.create_task(one(obj))


CRD_DIR = Path(__file__).parent / "config" / "crd"
JOB_CRD_PATH = CRD_DIR / "batch.volcano.sh_jobs.yaml"
PODGROUP_CRD_PATH = CRD_DIR / "scheduling.volcano.sh_podgroups.yaml"
CRD_KIND = GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")


async def install_job_crd(client: Client, wait_s: float = 30.0) -> None:
    """Create the Job CRD (from the checked-in YAML) unless it exists, and wait until Jobs can
    be listed: the CRD is then Established and its REST endpoint served."""
    await install_crd(client, JOB_CRD_PATH, Job, wait_s)


async def install_crds(client: Client, wait_s: float = 30.0) -> None:
    """The Job CRD and Volcano's PodGroup CRD, each installed and served."""
    await install_job_crd(client, wait_s)
    await install_crd(client, PODGROUP_CRD_PATH, VolcanoPodGroup, wait_s)


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


async def install_crd(client: Client, path: Path, kind: type[Any], wait_s: float = 30.0) -> None:
    """Create the CRD in ``path`` unless it exists; wait until ``kind`` can be listed."""
    crd = _load(path)
    with contextlib.suppress(AlreadyExists):
        await client.create(crd)
    async with asyncio.timeout(wait_s):
        while True:
            stored = await client.get(CRD_KIND, crd["metadata"]["name"])
            conditions = (stored.get("status") or {}).get("conditions") or []
            established = any(
                c.get("type") == "Established" and c.get("status") == "True" for c in conditions
            )
            if established:
                try:
                    await client.list(kind, page_size=1)
                    return
                except NotFound:
                    pass  # discovery has not caught up with the new endpoint yet
            await asyncio.sleep(0.1)


def priority_class_manifests() -> list[dict[str, Any]]:
    """The PriorityClasses the demo's jobs name: pods naming a missing one are refused."""
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "preemptionPolicy": "Never",
            "description": "training jobs of the gang-scheduler demo",
        }
        for name, value in PRIORITY_CLASSES.items()
    ]


async def create_simulated_cluster(
    client: Client, shape: ClusterShape, topology: TopologyConfig
) -> int:
    """Register the PriorityClasses and every simulated node; return the node count.

    The apiserver's TaintNodesByCondition admission gives every new Node the
    ``node.kubernetes.io/not-ready`` taint, which the node lifecycle controller lifts once the
    kubelet reports Ready. No such controller runs here, so this does its part: the nodes report
    Ready from the start, and their taints are cleared.
    """
    await create_all(client, priority_class_manifests())
    nodes = node_manifests(shape, topology)
    await create_all(client, nodes)
    gate = asyncio.Semaphore(CREATE_CONCURRENCY)

    async def clear_taints(name: str) -> None:
        async with gate:
            await client.patch(Node, name, {"spec": {"taints": None}})

    async with asyncio.TaskGroup() as group:
        for node in nodes:
            group.create_task(clear_taints(node["metadata"]["name"]))
    return len(nodes)


def node_cell(node: Node, topology: TopologyConfig) -> NodeCell:
    """A node as the picture draws it; a node missing a tier label is an error naming it."""
    name = node.metadata.name or "?"
    labels = node.metadata.labels
    if topology.tiers != 3:
        raise ValueError(
            f"topology: the picture draws 3 tiers, the configuration names {topology.tiers}"
        )
    leaf_label, spine_label, zone_label = topology.tier_labels
    missing = [key for key in (leaf_label, spine_label, zone_label) if key not in labels]
    if missing:
        raise ValueError(f"node {name}: no {missing[0]} label")
    gpus_text = node.status.allocatable.get(GPU_RESOURCE, "0") if node.status else "0"
    return NodeCell(
        name=name,
        zone=labels[zone_label],
        spine=labels[spine_label],
        leaf=labels[leaf_label],
        gpus=int(gpus_text),
        rdma=labels.get(RDMA_LABEL) == "true",
    )


def gpu_usage(pods: Sequence[Pod]) -> dict[str, list[JobUsage]]:
    """GPUs held per node and job, from pods that are bound and not finished."""
    held: dict[str, dict[str, int]] = {}
    for pod in pods:
        if not pod_holds_capacity(pod):
            continue
        job = pod.metadata.labels.get(JOB_NAME_LABEL, pod.metadata.name or "?")
        gpus = pod_requests(pod).get(GPU_RESOURCE, 0) // 1000
        node = pod.spec.node_name or ""
        held.setdefault(node, {})
        held[node][job] = held[node].get(job, 0) + gpus
    return {
        node: [JobUsage(job, gpus) for job, gpus in jobs.items()] for node, jobs in held.items()
    }


async def read_picture_data(
    client: Client, shape: ClusterShape, topology: TopologyConfig, namespace: str | None = None
) -> tuple[list[NodeCell], dict[str, list[JobUsage]]]:
    """The simulated nodes of ``shape`` and the GPUs each job's pods hold there, as the apiserver
    has them now (pods of ``namespace``, or of every namespace)."""
    selector = f"{SIMULATED_LABEL}={shape.name_prefix}"
    nodes = (await client.list(Node, label_selector=selector)).items
    pods = (await client.list(Pod, namespace=namespace)).items
    cells = [node_cell(node, topology) for node in nodes]
    cells.sort(key=lambda c: (c.zone, c.spine, c.leaf, c.name))
    known = {cell.name for cell in cells}
    usage = {node: entries for node, entries in gpu_usage(pods).items() if node in known}
    return cells, usage
