"""The simulated cluster and the scheduler's pod manifests against the real kube-apiserver."""

from __future__ import annotations

import uuid

import pytest
from examples.gang_scheduler.cluster_setup import create_simulated_cluster, read_picture_data
from examples.gang_scheduler.job_stream import LLAMA3_8B_FINETUNE, manifest
from examples.gang_scheduler.models import Job
from examples.gang_scheduler.picture import JobUsage
from examples.gang_scheduler.pods import JOB_NAME_LABEL, pod_manifest
from examples.gang_scheduler.simulated_cluster import SIMULATED_LABEL, ClusterShape
from examples.gang_scheduler.topology import TopologyConfig

from crdkit.client import Client
from crdkit.resources import Node, Pod
from crdkit.scheduling import node_entry
from crdkit.testing import ControlPlane

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def _shape() -> ClusterShape:
    # Nodes are cluster-scoped: a prefix of our own keeps tests sharing the apiserver apart.
    return ClusterShape(
        zones=1,
        spines_per_zone=1,
        leaves_per_spine=2,
        nodes_per_leaf=2,
        name_prefix=f"t{uuid.uuid4().hex[:8]}",
    )


async def test_simulated_nodes_are_stored_with_status_and_read_back(
    control_plane: ControlPlane,
) -> None:
    shape, topology = _shape(), TopologyConfig()
    async with Client.from_control_plane(control_plane) as client:
        assert await create_simulated_cluster(client, shape, topology) == 4
        # A second run finds them and changes nothing.
        assert await create_simulated_cluster(client, shape, topology) == 4
        nodes = (
            await client.list(Node, label_selector=f"{SIMULATED_LABEL}={shape.name_prefix}")
        ).items
        assert len(nodes) == 4
        snapshot = node_entry(sorted(nodes, key=lambda n: n.metadata.name or "")[0])
        assert snapshot["allocatable"]["nvidia.com/gpu"] == "8"
        assert snapshot["ready"] is True
        assert snapshot["labels"]["topology.crdkit.io/leaf"].endswith("-l0")
        cells, held = await read_picture_data(client, shape, topology)
        assert [cell.leaf for cell in cells] == ["z0-s0-l0", "z0-s0-l0", "z0-s0-l1", "z0-s0-l1"]
        assert held == {}


async def test_the_pods_of_a_job_are_accepted_owned_and_counted_once_bound(
    control_plane: ControlPlane, namespace: str
) -> None:
    shape, topology = _shape(), TopologyConfig()
    async with Client.from_control_plane(control_plane) as client:
        await create_simulated_cluster(client, shape, topology)
        nodes = [f"{shape.name_prefix}-z0-s0-l0-n00", f"{shape.name_prefix}-z0-s0-l0-n01"]
        data = manifest(LLAMA3_8B_FINETUNE)
        # The Job kind is not installed here: only its identity matters for owning pods.
        data["metadata"].update({"namespace": namespace, "uid": str(uuid.uuid4())})
        job = Job.model_validate(data)
        for task, node in (("master", nodes[0]), ("worker", nodes[1])):
            pod = pod_manifest(job, task, 0, "crdkit-gang-scheduler")
            pod["spec"]["nodeName"] = node  # as the scheduler's binding would set it
            await client.create(pod)
        pods = (
            await client.list(
                Pod, namespace=namespace, label_selector=f"{JOB_NAME_LABEL}=llama3-8b-finetune"
            )
        ).items
        assert sorted((p.metadata.name, p.spec.node_name) for p in pods) == [
            ("llama3-8b-finetune-master-0", nodes[0]),
            ("llama3-8b-finetune-worker-0", nodes[1]),
        ]
        for pod in pods:
            assert pod.spec.priority == 1000  # resolved from the PriorityClass by admission
            assert pod.metadata.owner_references[0].uid == job.metadata.uid
        _, held = await read_picture_data(client, shape, topology, namespace=namespace)
        assert held == {
            nodes[0]: [JobUsage("llama3-8b-finetune", 8)],
            nodes[1]: [JobUsage("llama3-8b-finetune", 8)],
        }
