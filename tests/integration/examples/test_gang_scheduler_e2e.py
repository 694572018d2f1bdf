"""The gang scheduler end to end on the real apiserver: the demo scenario, waiting jobs that are
placed when capacity frees up, and an operator restart that neither loses nor double-places."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter, defaultdict
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from examples.gang_scheduler.cluster_setup import create_simulated_cluster
from examples.gang_scheduler.job_stream import (
    JobShape,
    TaskShape,
    demo_stream,
    manifest,
)
from examples.gang_scheduler.kubelet_sim import SimulatedKubelets
from examples.gang_scheduler.models import Job
from examples.gang_scheduler.operator import GangScheduler
from examples.gang_scheduler.pods import JOB_NAME_LABEL, PodPlan, pod_manifest
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
from crdkit.testing import ControlPlane, eventually

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(240)]

TOPOLOGY = TopologyConfig()
LEAF, SPINE, ZONE = TOPOLOGY.tier_labels


def _prefix() -> str:
    return f"e{uuid.uuid4().hex[:7]}"


async def _job(client: Client, name: str, namespace: str) -> Job:
    return await client.get(Job, name, namespace=namespace)


async def _pods(client: Client, namespace: str, job: str | None = None) -> list[Pod]:
    selector = f"{JOB_NAME_LABEL}={job}" if job else JOB_NAME_LABEL
    return (await client.list(Pod, namespace=namespace, label_selector=selector)).items


async def _submit(client: Client, namespace: str, data: dict[str, Any]) -> None:
    await client.create(dict(data, metadata=dict(data["metadata"], namespace=namespace)))


def _gang(name: str, pods: int, tier: int | None = 1) -> dict[str, Any]:
    return manifest(JobShape(name, (TaskShape("worker", pods),), tier=tier))


async def _phase(client: Client, name: str, namespace: str) -> str | None:
    try:
        job = await _job(client, name, namespace)
    except NotFound:
        return None
    return job.status.state.phase if job.status else None


def _placed_nodes(scheduler: GangScheduler, key: str) -> Counter[tuple[str, str]]:
    """(task, node) -> pod count, as the placer decided for job ``key``."""
    decisions = [placement for job, placement in scheduler.decisions if job == key]
    assert len(decisions) == 1, f"{key} was placed {len(decisions)} times"
    counts: Counter[tuple[str, str]] = Counter()
    for assignment in decisions[0].assignments:
        counts[(assignment.task, assignment.node)] += assignment.count
    return counts


def _pod_nodes(pods: list[Pod]) -> Counter[tuple[str, str]]:
    return Counter(
        (pod.metadata.labels["volcano.sh/task-spec"], pod.spec.node_name or "") for pod in pods
    )


async def _gpus_per_node(client: Client, namespace: str) -> dict[str, int]:
    held: dict[str, int] = defaultdict(int)
    for pod in await _pods(client, namespace):
        if pod.spec.node_name and (
            pod.status is None or pod.status.phase not in ("Succeeded", "Failed")
        ):
            limits = pod.spec.containers[0].resources.limits
            held[pod.spec.node_name] += int(limits.get(GPU_RESOURCE, "0"))
    return held


async def test_demo_scenario_every_job_lands_where_the_placer_said(
    control_plane: ControlPlane, volcano_job_crd: str, namespace: str
) -> None:
    shape = ClusterShape(name_prefix=_prefix())
    stream = demo_stream()
    async with Client.from_control_plane(control_plane) as client:
        await create_simulated_cluster(client, shape, TOPOLOGY)
        nodes = {
            node.metadata.name: node.metadata.labels
            for node in (
                await client.list(Node, label_selector=f"{SIMULATED_LABEL}={shape.name_prefix}")
            ).items
        }
        run_for = {entry.name: entry.run_for_s for entry in stream}
        async with (
            running_operator(
                client,
                TOPOLOGY,
                namespace=namespace,
                node_selector=f"{SIMULATED_LABEL}={shape.name_prefix}",
            ) as scheduler,
            SimulatedKubelets(client, namespace, run_for),
        ):
            started = time.monotonic()
            for entry in stream:
                await asyncio.sleep(max(0.0, started + entry.submit_at_s - time.monotonic()))
                await _submit(client, namespace, entry.manifest)

            async def settled() -> bool:
                for entry in stream:
                    phase = await _phase(client, entry.name, namespace)
                    if entry.name == "gpt-neox-20b":
                        continue
                    if phase != ("Completed" if entry.run_for_s is not None else "Running"):
                        return False
                return True

            await eventually(settled, within=120)

            for entry in stream:
                job = await _job(client, entry.name, namespace)
                assert job.status is not None
                pods = await _pods(client, namespace, entry.name)
                if entry.name == "gpt-neox-20b":
                    # It can never fit: still Pending, with the placer's reason, and no pods.
                    assert job.status.state.phase == "Pending"
                    scheduled = next(c for c in job.status.conditions if c.type == "Scheduled")
                    assert scheduled.status == "False"
                    assert scheduled.reason == "Unschedulable"
                    assert scheduled.message.startswith(f"required {LEAF}: the best leaf fits")
                    assert pods == []
                    continue
                key = f"{namespace}/{entry.name}"
                # Exactly where the placer's decision put them, one pod per replica.
                assert _pod_nodes(pods) == _placed_nodes(scheduler, key)
                assert len(pods) == sum(
                    task["replicas"] for task in entry.manifest["spec"]["tasks"]
                )
                placement = job.status.placement
                assert placement is not None
                recorded = Counter((t.name, node) for t in placement.tasks for node in t.nodes)
                assert recorded == _placed_nodes(scheduler, key)
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
            headline = await _pods(client, namespace, "llama3-8b-finetune")
            assert {
                nodes[pod.spec.node_name]["feature.node.kubernetes.io/rdma.available"]
                for pod in headline
            } == {"true"}
            # Never more GPUs bound to a node than it has.
            assert max((await _gpus_per_node(client, namespace)).values()) <= shape.gpus_per_node


async def test_a_job_that_does_not_fit_waits_and_is_placed_when_another_is_deleted(
    control_plane: ControlPlane, volcano_job_crd: str, namespace: str
) -> None:
    shape = ClusterShape(
        zones=1, spines_per_zone=1, leaves_per_spine=2, nodes_per_leaf=4, name_prefix=_prefix()
    )
    selector = f"{SIMULATED_LABEL}={shape.name_prefix}"
    async with Client.from_control_plane(control_plane) as client:
        await create_simulated_cluster(client, shape, TOPOLOGY)
        async with running_operator(
            client, TOPOLOGY, namespace=namespace, node_selector=selector
        ) as scheduler:
            await _submit(client, namespace, _gang("first", 4))
            await _submit(client, namespace, _gang("second", 4))
            await eventually(lambda: _is(client, "first", namespace, "Running"))
            await eventually(lambda: _is(client, "second", namespace, "Running"))
            await _submit(client, namespace, _gang("third", 4))

            async def waiting_with_reason() -> bool:
                job = await _job(client, "third", namespace)
                conditions = job.status.conditions if job.status else []
                return any(c.type == "Scheduled" and c.status == "False" for c in conditions)

            await eventually(waiting_with_reason)
            third = await _job(client, "third", namespace)
            assert third.status is not None
            assert third.status.state.phase == "Pending"
            assert third.status.conditions[0].message.startswith(
                f"required {LEAF}: the best leaf fits 0 of 4"
            )
            assert await _pods(client, namespace, "third") == []
            await asyncio.sleep(1.0)  # no polling: nothing changes while nothing frees up
            assert await _pods(client, namespace, "third") == []

            first_leaf = {pod.spec.node_name for pod in await _pods(client, namespace, "first")}
            await client.delete(Job, "first", namespace=namespace)
            # The finalizer deletes the pods, then the job goes; the freed leaf takes "third".
            await eventually(lambda: _gone(client, "first", namespace))
            await eventually(lambda: _is(client, "third", namespace, "Running"))
            third_nodes = {pod.spec.node_name for pod in await _pods(client, namespace, "third")}
            assert third_nodes == first_leaf
            assert await _pods(client, namespace, "first") == []
            assert _pod_nodes(await _pods(client, namespace, "third")) == _placed_nodes(
                scheduler, f"{namespace}/third"
            )

            async def both_events() -> bool:
                events = (await client.list(Event, namespace=namespace)).items
                seen = {(e.regarding.name if e.regarding else None, e.reason) for e in events}
                return {("third", "FailedScheduling"), ("third", "Scheduled")} <= seen

            # Like kube-scheduler, each decision is an Event on the job.
            await eventually(both_events, within=60)


async def test_a_waiting_job_is_placed_when_a_node_is_added(
    control_plane: ControlPlane, volcano_job_crd: str, namespace: str
) -> None:
    shape = ClusterShape(
        zones=1, spines_per_zone=1, leaves_per_spine=1, nodes_per_leaf=2, name_prefix=_prefix()
    )
    selector = f"{SIMULATED_LABEL}={shape.name_prefix}"
    async with Client.from_control_plane(control_plane) as client:
        await create_simulated_cluster(client, shape, TOPOLOGY)
        async with running_operator(client, TOPOLOGY, namespace=namespace, node_selector=selector):
            await _submit(client, namespace, _gang("wide", 3))

            async def unschedulable() -> bool:
                job = await _job(client, "wide", namespace)
                return bool(job.status and job.status.conditions)

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
            await client.create(node_manifest(extra, shape, TOPOLOGY))
            await client.patch(Node, extra.name, {"spec": {"taints": None}})
            await eventually(lambda: _is(client, "wide", namespace, "Running"))
            assert len({pod.spec.node_name for pod in await _pods(client, namespace, "wide")}) == 3


async def test_restarting_the_operator_neither_loses_nor_double_places(
    control_plane: ControlPlane, volcano_job_crd: str, namespace: str
) -> None:
    shape = ClusterShape(
        zones=1, spines_per_zone=1, leaves_per_spine=2, nodes_per_leaf=4, name_prefix=_prefix()
    )
    selector = f"{SIMULATED_LABEL}={shape.name_prefix}"
    async with Client.from_control_plane(control_plane) as client:
        await create_simulated_cluster(client, shape, TOPOLOGY)
        async with running_operator(client, TOPOLOGY, namespace=namespace, node_selector=selector):
            await _submit(client, namespace, _gang("before", 4))
            await eventually(lambda: _is(client, "before", namespace, "Running"))
        before = {
            (p.metadata.name, p.metadata.uid, p.spec.node_name)
            for p in await _pods(client, namespace, "before")
        }
        # Submitted while no operator runs: one fits the free leaf, one does not fit at all.
        await _submit(client, namespace, _gang("during", 4))
        await _submit(client, namespace, _gang("later", 4))
        async with running_operator(
            client, TOPOLOGY, namespace=namespace, node_selector=selector
        ) as second:
            await eventually(lambda: _any_running(client, ("during", "later"), namespace))
            await asyncio.sleep(1.0)  # let any wrong second placement show itself
            after = {
                (p.metadata.name, p.metadata.uid, p.spec.node_name)
                for p in await _pods(client, namespace, "before")
            }
            assert after == before  # the placed job was recognised, not placed again
            assert [key for key, _ in second.decisions] in (
                [f"{namespace}/during"],
                [f"{namespace}/later"],
            )
            (placed_key,) = [key for key, _ in second.decisions]
            placed, waiting = (
                ("during", "later") if placed_key.endswith("/during") else ("later", "during")
            )
            all_pods = await _pods(client, namespace)
            assert len(all_pods) == 8
            assert max((await _gpus_per_node(client, namespace)).values()) <= shape.gpus_per_node
            placed_nodes = {pod.spec.node_name for pod in await _pods(client, namespace, placed)}
            assert placed_nodes.isdisjoint(node for _, _, node in before)
            assert await _is(client, waiting, namespace, "Pending")
            assert await _pods(client, namespace, waiting) == []


async def _is(client: Client, name: str, namespace: str, phase: str) -> bool:
    return await _phase(client, name, namespace) == phase


async def _any_running(client: Client, names: tuple[str, ...], namespace: str) -> bool:
    return any([await _is(client, name, namespace, "Running") for name in names])


async def _gone(client: Client, name: str, namespace: str) -> bool:
    return await _phase(client, name, namespace) is None and not await _pods(
        client, namespace, name
    )


async def _leave_pods(client: Client, namespace: str, job_name: str, nodes: list[str]) -> None:
    """Create pods for ``job_name`` as an operator that stopped mid-bind would have left them."""
    job = await _job(client, job_name, namespace)
    for index, node in enumerate(nodes):
        await client.create(
            pod_manifest(job, PodPlan("worker", index, node), "crdkit-gang-scheduler")
        )


async def test_a_gang_left_incomplete_by_a_stopped_operator_is_rolled_back_and_placed_again(
    control_plane: ControlPlane, volcano_job_crd: str, namespace: str
) -> None:
    shape = ClusterShape(
        zones=1, spines_per_zone=1, leaves_per_spine=2, nodes_per_leaf=4, name_prefix=_prefix()
    )
    selector = f"{SIMULATED_LABEL}={shape.name_prefix}"
    async with Client.from_control_plane(control_plane) as client:
        await create_simulated_cluster(client, shape, TOPOLOGY)
        await _submit(client, namespace, _gang("torn", 4))
        names = [node.name for node in layout(shape)]
        # Two of four pods exist, on two different leaves: not a gang anyone would have chosen.
        await _leave_pods(client, namespace, "torn", [names[0], names[4]])
        async with running_operator(
            client, TOPOLOGY, namespace=namespace, node_selector=selector
        ) as scheduler:
            await eventually(lambda: _is(client, "torn", namespace, "Running"))
            pods = await _pods(client, namespace, "torn")
            assert len(pods) == 4
            assert _pod_nodes(pods) == _placed_nodes(scheduler, f"{namespace}/torn")
            nodes = {node.name: node.leaf for node in layout(shape)}
            assert len({nodes[pod.spec.node_name or ""] for pod in pods}) == 1


async def test_a_complete_gang_without_a_recorded_placement_is_adopted_not_placed_again(
    control_plane: ControlPlane, volcano_job_crd: str, namespace: str
) -> None:
    shape = ClusterShape(
        zones=1, spines_per_zone=1, leaves_per_spine=2, nodes_per_leaf=4, name_prefix=_prefix()
    )
    selector = f"{SIMULATED_LABEL}={shape.name_prefix}"
    async with Client.from_control_plane(control_plane) as client:
        await create_simulated_cluster(client, shape, TOPOLOGY)
        await _submit(client, namespace, _gang("whole", 4))
        leaf = [node.name for node in layout(shape)][4:8]
        await _leave_pods(client, namespace, "whole", leaf)
        before = {
            (p.metadata.name, p.metadata.uid) for p in await _pods(client, namespace, "whole")
        }
        async with running_operator(
            client, TOPOLOGY, namespace=namespace, node_selector=selector
        ) as scheduler:

            async def recorded() -> bool:
                job = await _job(client, "whole", namespace)
                return bool(job.status and job.status.placement)

            await eventually(recorded)
            job = await _job(client, "whole", namespace)
            assert job.status is not None
            assert job.status.placement is not None
            assert job.status.placement.tier == 1
            assert job.status.placement.domain_name == "z0-s0-l1"
            assert job.status.placement.tasks[0].nodes == leaf
            after = {
                (p.metadata.name, p.metadata.uid) for p in await _pods(client, namespace, "whole")
            }
            assert after == before
            assert scheduler.decisions == []


async def test_a_failed_pod_create_rolls_the_whole_gang_back_then_retries(
    control_plane: ControlPlane, volcano_job_crd: str, namespace: str
) -> None:
    shape = ClusterShape(
        zones=1, spines_per_zone=1, leaves_per_spine=1, nodes_per_leaf=4, name_prefix=_prefix()
    )
    selector = f"{SIMULATED_LABEL}={shape.name_prefix}"
    async with Client.from_control_plane(control_plane) as client:
        await create_simulated_cluster(client, shape, TOPOLOGY)
        # Someone else's pod already has the name of the gang's third pod: that create fails.
        squatter = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "blocked-worker-2", "namespace": namespace},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }
        await client.create(squatter)
        await _submit(client, namespace, _gang("blocked", 4))
        async with running_operator(
            client, TOPOLOGY, namespace=namespace, node_selector=selector
        ) as scheduler:
            deadline = time.monotonic() + 2.0
            while time.monotonic() < deadline:
                # Pods come and go while the operator retries, but the job never runs partly.
                assert await _phase(client, "blocked", namespace) != "Running"
                await asyncio.sleep(0.05)
            assert scheduler.decisions == []
            await eventually(lambda: _no_owned_pods(client, namespace, "blocked"))
            # The rollback deleted only what the operator had created.
            assert (await client.get(Pod, "blocked-worker-2", namespace=namespace)).metadata.uid
            await client.delete(
                Pod, "blocked-worker-2", namespace=namespace, grace_period_seconds=0
            )
            await eventually(lambda: _is(client, "blocked", namespace, "Running"), within=90)
            pods = await _pods(client, namespace, "blocked")
            assert len(pods) == 4
            assert _pod_nodes(pods) == _placed_nodes(scheduler, f"{namespace}/blocked")


async def _no_owned_pods(client: Client, namespace: str, job: str) -> bool:
    return not [p for p in await _pods(client, namespace, job) if p.metadata.owner_references]


async def test_freed_capacity_goes_to_the_higher_priority_job_first(
    control_plane: ControlPlane, volcano_job_crd: str, namespace: str
) -> None:
    shape = ClusterShape(
        zones=1, spines_per_zone=1, leaves_per_spine=1, nodes_per_leaf=4, name_prefix=_prefix()
    )
    selector = f"{SIMULATED_LABEL}={shape.name_prefix}"
    async with Client.from_control_plane(control_plane) as client:
        await create_simulated_cluster(client, shape, TOPOLOGY)
        async with running_operator(client, TOPOLOGY, namespace=namespace, node_selector=selector):
            await _submit(client, namespace, _gang("fill", 4))
            await eventually(lambda: _is(client, "fill", namespace, "Running"))
            low = manifest(JobShape("low", (TaskShape("worker", 4),), tier=1))
            high = manifest(
                JobShape("high", (TaskShape("worker", 4),), tier=1, priority_class="training-high")
            )
            await _submit(client, namespace, low)  # older, but lower priority
            await asyncio.sleep(1.1)  # a later creationTimestamp (whole seconds) for "high"
            await _submit(client, namespace, high)

            async def both_waiting() -> bool:
                jobs = [await _job(client, name, namespace) for name in ("low", "high")]
                return all(job.status is not None and job.status.conditions for job in jobs)

            await eventually(both_waiting)
            await client.delete(Job, "fill", namespace=namespace)
            await eventually(lambda: _is(client, "high", namespace, "Running"))
            await asyncio.sleep(0.5)
            assert await _is(client, "low", namespace, "Pending")
            assert await _pods(client, namespace, "low") == []


async def test_a_gang_that_fits_only_at_its_minimum_starts_with_min_available_pods(
    control_plane: ControlPlane, volcano_job_crd: str, namespace: str
) -> None:
    shape = ClusterShape(
        zones=1, spines_per_zone=1, leaves_per_spine=1, nodes_per_leaf=4, name_prefix=_prefix()
    )
    selector = f"{SIMULATED_LABEL}={shape.name_prefix}"
    elastic = _gang("elastic", 6)
    elastic["spec"]["minAvailable"] = 3
    elastic["spec"]["tasks"][0]["minAvailable"] = 3
    async with Client.from_control_plane(control_plane) as client:
        await create_simulated_cluster(client, shape, TOPOLOGY)
        async with running_operator(
            client, TOPOLOGY, namespace=namespace, node_selector=selector
        ) as scheduler:
            await _submit(client, namespace, elastic)
            await eventually(lambda: _is(client, "elastic", namespace, "Running"))
            pods = await _pods(client, namespace, "elastic")
            # Six do not fit on four 8-GPU nodes; the placer never places a count in between,
            # so the gang starts at its minimum of three.
            assert len(pods) == 3
            ((_, decision),) = scheduler.decisions
            assert decision.status == "minimal"
            assert _pod_nodes(pods) == _placed_nodes(scheduler, f"{namespace}/elastic")


async def test_volcanos_own_example_jobs_are_scheduled(
    control_plane: ControlPlane, volcano_job_crd: str, namespace: str
) -> None:
    shape = ClusterShape(
        zones=1, spines_per_zone=1, leaves_per_spine=1, nodes_per_leaf=4, name_prefix=_prefix()
    )
    selector = f"{SIMULATED_LABEL}={shape.name_prefix}"
    manifests = Path(__file__).parents[3] / "examples" / "gang_scheduler" / "manifests"
    async with Client.from_control_plane(control_plane) as client:
        await create_simulated_cluster(client, shape, TOPOLOGY)
        async with running_operator(client, TOPOLOGY, namespace=namespace, node_selector=selector):
            for name, pods in (("volcano-basic-job.yaml", 6), ("volcano-mpi-job.yaml", 3)):
                data = yaml.safe_load((manifests / name).read_text())
                await _submit(client, namespace, data)
                job: str = data["metadata"]["name"]
                await eventually(partial(_is, client, job, namespace, "Running"))
                bound = await _pods(client, namespace, job)
                assert len(bound) == pods
                assert all(pod.spec.node_name for pod in bound)
