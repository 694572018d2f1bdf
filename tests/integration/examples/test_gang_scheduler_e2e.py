"""The gang-scheduler operator end to end on the real apiserver: the Job controller makes each
Job's PodGroup and pods, crdkit.scheduling's GangScheduler binds them. The demo scenario, waiting
jobs that say why and are placed when capacity frees up, priority order, deletion, and an
operator restart that neither loses nor double-places."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from examples.gang_scheduler.cluster_setup import create_simulated_cluster
from examples.gang_scheduler.job_stream import JobShape, TaskShape, demo_stream, manifest
from examples.gang_scheduler.kubelet_sim import SimulatedKubelets
from examples.gang_scheduler.models import Job
from examples.gang_scheduler.operator import VolcanoJobReconciler
from examples.gang_scheduler.pods import JOB_NAME_LABEL, pod_manifest
from examples.gang_scheduler.run import running_operator
from examples.gang_scheduler.simulated_cluster import (
    GPU_RESOURCE,
    SIMULATED_LABEL,
    ClusterShape,
    layout,
    node_manifest,
)
from examples.gang_scheduler.topology import TopologyConfig

from crdkit.client import Client, NotFound
from crdkit.resources import Event, Node, Pod
from crdkit.scheduling import VolcanoPodGroup
from crdkit.testing import ControlPlane, eventually

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(240)]

TOPOLOGY = TopologyConfig()
LEAF, SPINE, ZONE = TOPOLOGY.tier_labels


def _prefix() -> str:
    return f"e{uuid.uuid4().hex[:7]}"


def _small(**shape: int) -> ClusterShape:
    return ClusterShape(**{"zones": 1, "spines_per_zone": 1, **shape}, name_prefix=_prefix())


def _scheduler_name(shape: ClusterShape) -> str:
    return f"gang-{shape.name_prefix}"


def _gang(name: str, pods: int, tier: int | None = 1) -> dict[str, Any]:
    return manifest(JobShape(name, (TaskShape("worker", pods),), tier=tier))


@dataclass(frozen=True)
class _Cluster:
    """One test's simulated nodes and namespace on the shared gang plane, and a client to it:
    what the tests ask of the apiserver, always about their own namespace."""

    client: Client
    namespace: str
    shape: ClusterShape

    def operator(self) -> AbstractAsyncContextManager[VolcanoJobReconciler]:
        """The operator on the shape's nodes, its scheduler named for them: the tests share one
        apiserver, and a scheduler places the pods naming it in every namespace."""
        return running_operator(
            self.client,
            TOPOLOGY,
            namespace=self.namespace,
            node_selector=f"{SIMULATED_LABEL}={self.shape.name_prefix}",
            pod_scheduler_name=_scheduler_name(self.shape),
        )

    async def job(self, name: str) -> Job:
        return await self.client.get(Job, name, namespace=self.namespace)

    async def pods(self, job: str | None = None) -> list[Pod]:
        selector = f"{JOB_NAME_LABEL}={job}" if job else JOB_NAME_LABEL
        pods = await self.client.list(Pod, namespace=self.namespace, label_selector=selector)
        return pods.items

    async def bound(self, job: str | None = None) -> list[Pod]:
        return [pod for pod in await self.pods(job) if pod.spec.node_name]

    async def bound_count(self, job: str, count: int) -> bool:
        return len(await self.bound(job)) == count

    async def submit(self, data: dict[str, Any]) -> None:
        metadata = dict(data["metadata"], namespace=self.namespace)
        await self.client.create(dict(data, metadata=metadata))

    async def phase(self, name: str) -> str | None:
        try:
            job = await self.job(name)
        except NotFound:
            return None
        return job.status.state.phase if job.status else None

    async def is_(self, name: str, phase: str) -> bool:
        return await self.phase(name) == phase

    async def running(self, name: str) -> None:
        await eventually(lambda: self.is_(name, "Running"))

    async def running_job(self, name: str) -> tuple[Job, list[Pod]]:
        """Once the job is Running: the job and its pods."""
        await self.running(name)
        return await self.job(name), await self.pods(name)

    def node_names(self) -> list[str]:
        return [node.name for node in layout(self.shape)]

    async def any_running(self, names: tuple[str, ...]) -> bool:
        return any([await self.is_(name, "Running") for name in names])

    async def gone(self, name: str) -> bool:
        if await self.phase(name) is not None or await self.pods(name):
            return False
        try:
            await self.client.get(VolcanoPodGroup, name, namespace=self.namespace)
        except NotFound:
            return True
        return False

    async def gpus_per_node(self) -> dict[str, int]:
        held: dict[str, int] = defaultdict(int)
        for pod in await self.pods():
            if pod.spec.node_name and (
                pod.status is None or pod.status.phase not in ("Succeeded", "Failed")
            ):
                limits = pod.spec.containers[0].resources.limits
                held[pod.spec.node_name] += int(limits.get(GPU_RESOURCE, "0"))
        return held

    async def leave_pods(self, job_name: str, nodes: list[str]) -> None:
        """Create bound pods for ``job_name`` as a scheduler that stopped mid-gang would leave
        them."""
        job = await self.job(job_name)
        for index, node in enumerate(nodes):
            pod = pod_manifest(job, "worker", index, _scheduler_name(self.shape))
            pod["spec"]["nodeName"] = node
            await self.client.create(pod)

    async def podgroup_exists(self, name: str) -> bool:
        try:
            podgroup = await self.client.get(VolcanoPodGroup, name, namespace=self.namespace)
        except NotFound:
            return False
        assert podgroup.spec.min_member == 4
        assert podgroup.metadata.owner_references[0].name == name
        return True

    async def scheduler_said_why(self, name: str) -> bool:
        job = await self.job(name)
        conditions = job.status.conditions if job.status is not None else []
        return any(c.type == "Scheduled" and c.reason == "Unschedulable" for c in conditions)


Simulate = Callable[[ClusterShape], AbstractAsyncContextManager[_Cluster]]


@pytest.fixture
def simulate(gang_plane: ControlPlane, gang_namespace: str) -> Simulate:
    """Creates a shape's simulated nodes on the gang plane for the test's namespace; no operator
    runs until the test starts one."""

    @asynccontextmanager
    async def simulated(shape: ClusterShape) -> AsyncIterator[_Cluster]:
        async with Client.from_control_plane(gang_plane) as client:
            await create_simulated_cluster(client, shape, TOPOLOGY)
            yield _Cluster(client, gang_namespace, shape)

    return simulated


@pytest.fixture
async def cluster(simulate: Simulate) -> AsyncIterator[_Cluster]:
    """Two leaves of four nodes (`simulate`), the shape most tests need."""
    async with simulate(_small(leaves_per_spine=2, nodes_per_leaf=4)) as simulated:
        yield simulated


@pytest.fixture
async def one_leaf(simulate: Simulate) -> AsyncIterator[_Cluster]:
    """One leaf of four nodes (`simulate`)."""
    async with simulate(_small(leaves_per_spine=1, nodes_per_leaf=4)) as simulated:
        yield simulated


def _recorded(job: Job) -> Counter[tuple[str, str]]:
    """(task, node) -> pod count, as the Job's status records its placement."""
    assert job.status is not None
    assert job.status.placement is not None
    return Counter((t.name, node) for t in job.status.placement.tasks for node in t.nodes)


def _pod_nodes(pods: list[Pod]) -> Counter[tuple[str, str]]:
    """(task, node) -> count of the bound pods."""
    return Counter(
        (pod.metadata.labels["volcano.sh/task-spec"], pod.spec.node_name or "")
        for pod in pods
        if pod.spec.node_name
    )


async def test_demo_scenario_every_job_lands_whole_inside_its_domain(
    simulate: Simulate,
) -> None:
    shape = ClusterShape(name_prefix=_prefix())
    stream = demo_stream()
    async with simulate(shape) as cluster:
        client = cluster.client
        nodes = {
            node.metadata.name: node.metadata.labels
            for node in (
                await client.list(Node, label_selector=f"{SIMULATED_LABEL}={shape.name_prefix}")
            ).items
        }
        run_for = {entry.name: entry.run_for_s for entry in stream}
        async with (
            cluster.operator(),
            SimulatedKubelets(client, cluster.namespace, run_for),
        ):
            started = time.monotonic()
            for entry in stream:
                await asyncio.sleep(max(0.0, started + entry.submit_at_s - time.monotonic()))
                await cluster.submit(entry.manifest)

            async def settled() -> bool:
                for entry in stream:
                    phase = await cluster.phase(entry.name)
                    if entry.name == "gpt-neox-20b":
                        # settled once the scheduler has said why: its first attempt may come
                        # after the other jobs are running, depending on the queue's order
                        if not await cluster.scheduler_said_why(entry.name):
                            return False
                        continue
                    if phase != ("Completed" if entry.run_for_s is not None else "Running"):
                        return False
                return True

            await eventually(settled, within=120)

            for entry in stream:
                job = await cluster.job(entry.name)
                assert job.status is not None
                pods = await cluster.pods(entry.name)
                replicas = sum(task["replicas"] for task in entry.manifest["spec"]["tasks"])
                assert len(pods) == replicas  # one pod per replica, made by the controller
                if entry.name == "gpt-neox-20b":
                    # It can never fit: still Pending with the scheduler's reason, none bound.
                    assert job.status.state.phase == "Pending"
                    scheduled = next(c for c in job.status.conditions if c.type == "Scheduled")
                    assert scheduled.status == "False"
                    assert scheduled.reason == "Unschedulable"
                    assert scheduled.message.startswith(
                        "never fits this cluster, even with every node empty: "
                    )
                    assert f"required {LEAF}: the best leaf fits" in scheduled.message
                    assert _pod_nodes(pods) == Counter()
                    assert job.status.placement is None
                    continue
                # Every pod bound, and the status records exactly where.
                assert sum(_pod_nodes(pods).values()) == replicas
                assert _pod_nodes(pods) == _recorded(job)
                placement = job.status.placement
                assert placement is not None
                network = entry.manifest["spec"].get("networkTopology")
                if network and network["mode"] == "hard":
                    label = TOPOLOGY.label_for_tier(network["highestTierAllowed"])
                    domains = {nodes[pod.spec.node_name][label] for pod in pods}
                    # A hard tier-1 job never spans two leaves (and so on up the tiers).
                    assert len(domains) == 1, (entry.name, domains)
                    assert placement.tier is not None
                    assert placement.tier <= network["highestTierAllowed"]
                for pod in pods:
                    owner = pod.metadata.owner_references[0]
                    assert (owner.kind, owner.name, owner.uid) == (
                        "Job",
                        entry.name,
                        job.metadata.uid,
                    )
            headline = await cluster.pods("llama3-8b-finetune")
            assert {
                nodes[pod.spec.node_name]["feature.node.kubernetes.io/rdma.available"]
                for pod in headline
            } == {"true"}
            # Never more GPUs bound to a node than it has.
            assert max((await cluster.gpus_per_node()).values()) <= shape.gpus_per_node


async def test_a_job_that_does_not_fit_waits_and_is_placed_when_another_is_deleted(
    cluster: _Cluster,
) -> None:
    async with cluster.operator():
        await cluster.submit(_gang("first", 4))
        await cluster.submit(_gang("second", 4))
        await cluster.running("first")
        await cluster.running("second")
        await cluster.submit(_gang("third", 4))

        async def waiting_with_reason() -> bool:
            job = await cluster.job("third")
            conditions = job.status.conditions if job.status else []
            return any(
                c.type == "Scheduled" and c.status == "False" and c.reason == "Unschedulable"
                for c in conditions
            )

        await eventually(waiting_with_reason)
        third = await cluster.job("third")
        assert third.status is not None
        assert third.status.state.phase == "Pending"
        assert third.status.conditions[0].message.startswith(
            f"not now: required {LEAF}: the best leaf fits 0 of 4"
        )
        assert await cluster.bound("third") == []
        await asyncio.sleep(1.0)  # nothing changes while nothing frees up
        assert await cluster.bound("third") == []

        first_leaf = {pod.spec.node_name for pod in await cluster.pods("first")}
        await cluster.client.delete(Job, "first", namespace=cluster.namespace)
        # The finalizer deletes the pods and the PodGroup, then the job goes; the freed
        # leaf takes "third".
        await eventually(lambda: cluster.gone("first"))
        third, pods = await cluster.running_job("third")
        assert {pod.spec.node_name for pod in pods} == first_leaf
        assert _pod_nodes(pods) == _recorded(third)

        async def both_events() -> bool:
            events = (await cluster.client.list(Event, namespace=cluster.namespace)).items
            seen = {(e.regarding.name if e.regarding else None, e.reason) for e in events}
            return {("third", "FailedScheduling"), ("third", "Scheduled")} <= seen

        # Each change of the Scheduled condition is an Event on the job.
        await eventually(both_events, within=60)


async def test_a_waiting_job_is_placed_when_a_node_is_added(
    simulate: Simulate,
) -> None:
    shape = _small(leaves_per_spine=1, nodes_per_leaf=2)
    async with (
        simulate(shape) as cluster,
        cluster.operator(),
    ):
        await cluster.submit(_gang("wide", 3))

        async def unschedulable() -> bool:
            job = await cluster.job("wide")
            conditions = job.status.conditions if job.status else []
            return any(c.reason == "Unschedulable" for c in conditions)

        await eventually(unschedulable)
        # A third node joins the same leaf (as a kubelet registering would).
        extra = layout(
            ClusterShape(
                zones=1,
                spines_per_zone=1,
                leaves_per_spine=1,
                nodes_per_leaf=3,
                name_prefix=shape.name_prefix,
            )
        )[2]
        await cluster.client.create(node_manifest(extra, shape, TOPOLOGY))
        await cluster.client.patch(Node, extra.name, {"spec": {"taints": None}})
        await cluster.running("wide")
        assert len({pod.spec.node_name for pod in await cluster.pods("wide")}) == 3


async def test_restarting_the_operator_neither_loses_nor_double_places(cluster: _Cluster) -> None:
    async with cluster.operator():
        await cluster.submit(_gang("before", 4))
        await cluster.running("before")
    before = {
        (p.metadata.name, p.metadata.uid, p.spec.node_name) for p in await cluster.pods("before")
    }
    # Submitted while no operator runs: one fits the free leaf, the other then cannot.
    await cluster.submit(_gang("during", 4))
    await cluster.submit(_gang("later", 4))
    async with cluster.operator() as second:
        await eventually(lambda: cluster.any_running(("during", "later")))
        await asyncio.sleep(1.0)  # let any wrong second placement show itself
        after = {
            (p.metadata.name, p.metadata.uid, p.spec.node_name)
            for p in await cluster.pods("before")
        }
        assert after == before  # the placed job was recognised, not placed again
        assert second.scheduler.bound_gangs == 1
        placed, waiting = (
            ("during", "later") if await cluster.is_("during", "Running") else ("later", "during")
        )
        assert len(await cluster.bound()) == 8
        assert max((await cluster.gpus_per_node()).values()) <= cluster.shape.gpus_per_node
        placed_nodes = {pod.spec.node_name for pod in await cluster.pods(placed)}
        assert placed_nodes.isdisjoint(node for _, _, node in before)
        assert await cluster.is_(waiting, "Pending")
        assert await cluster.bound(waiting) == []


async def test_a_gang_left_half_bound_is_rolled_back_and_placed_whole_again(
    cluster: _Cluster,
) -> None:
    await cluster.submit(_gang("torn", 4))
    await cluster.submit(_gang("filler", 2))
    names = cluster.node_names()
    # Two of four pods exist, bound in leaf l0, and "filler" is about to take the rest of
    # it: the missing two cannot join them there, so the gang is rolled back.
    await cluster.leave_pods("torn", names[0:2])
    await cluster.leave_pods("filler", names[2:4])
    old = {p.metadata.uid for p in await cluster.pods("torn")}
    async with cluster.operator():
        job, pods = await cluster.running_job("torn")
        assert len(pods) == 4
        assert old.isdisjoint(p.metadata.uid for p in pods)  # the half-bound ones went
        assert {pod.spec.node_name for pod in pods} == set(names[4:8])
        assert _pod_nodes(pods) == _recorded(job)


async def test_a_gang_left_incomplete_across_two_leaves_is_rolled_back_and_placed_again(
    cluster: _Cluster,
) -> None:
    await cluster.submit(_gang("split", 4))
    names = cluster.node_names()
    # Two of four pods exist, on two different leaves: not a gang anyone would have chosen.
    await cluster.leave_pods("split", [names[0], names[4]])
    async with cluster.operator():
        job, pods = await cluster.running_job("split")
        assert len(pods) == 4
        nodes = {node.name: node.leaf for node in layout(cluster.shape)}
        assert len({nodes[pod.spec.node_name or ""] for pod in pods}) == 1
        assert _pod_nodes(pods) == _recorded(job)


async def test_a_complete_gang_without_a_recorded_placement_is_adopted_not_placed_again(
    cluster: _Cluster,
) -> None:
    await cluster.submit(_gang("whole", 4))
    leaf = cluster.node_names()[4:8]
    await cluster.leave_pods("whole", leaf)
    before = {(p.metadata.name, p.metadata.uid) for p in await cluster.pods("whole")}
    async with cluster.operator() as operator:

        async def recorded() -> bool:
            job = await cluster.job("whole")
            return bool(job.status and job.status.placement)

        await eventually(recorded)
        job = await cluster.job("whole")
        assert job.status is not None
        assert job.status.placement is not None
        assert job.status.state.phase == "Running"
        assert job.status.placement.tier == 1
        assert job.status.placement.domain_name == "z0-s0-l1"
        assert job.status.placement.tasks[0].nodes == leaf
        await eventually(partial(cluster.podgroup_exists, "whole"))
        after = {(p.metadata.name, p.metadata.uid) for p in await cluster.pods("whole")}
        assert after == before
        assert operator.scheduler.bound_gangs == 0


async def test_freed_capacity_goes_to_the_higher_priority_job_first(one_leaf: _Cluster) -> None:
    async with one_leaf.operator():
        await one_leaf.submit(_gang("fill", 4))
        await one_leaf.running("fill")
        low = manifest(JobShape("low", (TaskShape("worker", 4),), tier=1))
        high = manifest(
            JobShape("high", (TaskShape("worker", 4),), tier=1, priority_class="training-high")
        )
        await one_leaf.submit(low)  # older, but lower priority
        await asyncio.sleep(1.1)  # a later creationTimestamp (whole seconds) for "high"
        await one_leaf.submit(high)

        async def both_waiting() -> bool:
            jobs = [await one_leaf.job(name) for name in ("low", "high")]
            return all(
                job.status is not None
                and any(c.reason == "Unschedulable" for c in job.status.conditions)
                for job in jobs
            )

        await eventually(both_waiting)
        await one_leaf.client.delete(Job, "fill", namespace=one_leaf.namespace)
        await one_leaf.running("high")
        await asyncio.sleep(0.5)
        assert await one_leaf.is_("low", "Pending")
        assert await one_leaf.bound("low") == []


async def test_a_gang_that_fits_only_at_its_minimum_starts_with_min_available_pods(
    one_leaf: _Cluster,
) -> None:
    elastic = _gang("elastic", 6)
    elastic["spec"]["minAvailable"] = 3
    elastic["spec"]["tasks"][0]["minAvailable"] = 3
    async with one_leaf.operator():
        await one_leaf.submit(elastic)
        await one_leaf.running("elastic")
        # Six 8-GPU pods do not fit four 8-GPU nodes: the gang starts with its minimum of
        # three bound together, and the pods beyond it are bound as room allows (one more).
        await eventually(lambda: one_leaf.bound_count("elastic", 4))
        await asyncio.sleep(0.5)
        pods = await one_leaf.pods("elastic")
        assert len(pods) == 6
        assert sum(_pod_nodes(pods).values()) == 4
        job = await one_leaf.job("elastic")
        assert job.status is not None
        assert job.status.min_available == 3
        assert _pod_nodes(pods) == _recorded(job)


async def test_volcanos_own_example_jobs_are_scheduled(one_leaf: _Cluster) -> None:
    manifests = Path(__file__).parents[3] / "examples" / "gang_scheduler" / "manifests"
    async with one_leaf.operator():
        # What each asks for that this controller does not do is named in Honored.
        ignored = {
            "volcano-basic-job.yaml": "spec.policies, spec.plugins, spec.maxRetry",
            "volcano-mpi-job.yaml": "spec.plugins, spec.tasks[mpimaster].policies",
        }
        for name, pods in (("volcano-basic-job.yaml", 6), ("volcano-mpi-job.yaml", 3)):
            data = yaml.safe_load((manifests / name).read_text())
            await one_leaf.submit(data)
            job: str = data["metadata"]["name"]
            await one_leaf.running(job)
            await eventually(partial(one_leaf.bound_count, job, pods))
            stored = await one_leaf.job(job)
            assert stored.status is not None
            honored = next(c for c in stored.status.conditions if c.type == "Honored")
            assert (honored.status, honored.reason) == ("False", "NotHonored")
            assert honored.message == (
                f"kept, but not acted on by this controller: {ignored[name]}"
            )
