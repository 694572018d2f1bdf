"""The secondary gang scheduler on the real apiserver, with pods made as other controllers make
them: a PyTorchJob's pods from Kubeflow's training-operator grouped by a Volcano or a
coscheduling PodGroup, and a bare pod.

Nothing runs a kubelet here: bound pods stay Pending, which is what a scheduler sees between
binding and a kubelet starting the containers.
"""

from __future__ import annotations

import pytest
from _cluster import (
    RACK,
    all_bound,
    bound_count,
    bound_count_is,
    bound_nodes,
    create_all,
    create_job,
    has_event,
    pods_of,
    pool_with_nodes,
    pytorchjob_pods,
    running_scheduler,
)

from crdkit.client import Client
from crdkit.resources import Event, Pod
from crdkit.scheduling.groups.coscheduling import CoschedulingPodGroup
from crdkit.scheduling.groups.volcano import VolcanoPodGroup
from crdkit.testing import ControlPlane, eventually

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


async def test_a_pytorchjob_gang_lands_under_one_rack(scheduling_plane: ControlPlane) -> None:
    async with Client.from_control_plane(scheduling_plane) as client:
        # Rack a has 3 nodes, rack b has 4: a master and 3 workers fit only in rack b.
        pool, _, name = await pool_with_nodes(client, scheduling_plane, {"a": 3, "b": 4})
        await create_job(client, pool, "llama", 3, scheduler=name)
        async with running_scheduler(client, pool, name):
            await eventually(lambda: all_bound(client, pool, "llama"), what="the gang bound")
            pods = await pods_of(client, pool, "llama")
            nodes = {pod.spec.node_name for pod in pods}
            assert len(nodes) == 4  # one 8-GPU pod per 8-GPU node
            assert all(node and node.startswith(f"{pool}-b-") for node in nodes)

            async def group_running() -> bool:
                group = await client.get(VolcanoPodGroup, "llama", namespace=pool)
                return group.status is not None and group.status.phase == "Running"

            await eventually(group_running, what="the PodGroup Running")
            group = await client.get(VolcanoPodGroup, "llama", namespace=pool)
            assert group.status is not None
            scheduled = [c for c in group.status.conditions or [] if c.type == "Scheduled"]
            assert scheduled
            assert scheduled[0].status == "True"
            await eventually(
                lambda: has_event(client, pool, about="llama-master-0", reason="Scheduled"),
                what="a Scheduled event",
            )
        assert RACK  # the rack label is what the pool's nodes are grouped by


async def test_one_rank_per_node_spreads_a_pytorchjob_of_small_pods(
    scheduling_plane: ControlPlane,
) -> None:
    async with Client.from_control_plane(scheduling_plane) as client:
        pool, _, name = await pool_with_nodes(client, scheduling_plane, {"a": 4, "b": 4})
        # Every rank on a node of its own, as training users write it.
        one_per_node = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {
                            "matchLabels": {"training.kubeflow.org/job-name": "ranks"}
                        },
                    }
                ]
            }
        }
        await create_job(client, pool, "ranks", 3, scheduler=name, gpus=1, affinity=one_per_node)
        # A second job without the rule, to show what the rule changes: its four one-GPU
        # pods share one node.
        await create_job(client, pool, "packed", 3, scheduler=name, gpus=1)
        async with running_scheduler(client, pool, name):
            await eventually(lambda: all_bound(client, pool, "ranks"), what="the ranks bound")
            await eventually(lambda: all_bound(client, pool, "packed"), what="the packed bound")
            ranks = await bound_nodes(client, pool, "ranks")
            assert len(set(ranks)) == 4
            assert len({node.rsplit("-n", 1)[0] for node in ranks if node}) == 1  # one rack
            assert len(set(await bound_nodes(client, pool, "packed"))) == 1


async def test_two_gangs_that_together_exceed_capacity_never_end_partly_bound(
    scheduling_plane: ControlPlane,
) -> None:
    """Per-pod scheduling would bind some pods of each and deadlock both; a gang scheduler
    binds one whole gang and leaves the other wholly pending, with the reason."""
    async with Client.from_control_plane(scheduling_plane) as client:
        # 4 nodes, one 8-GPU pod each
        pool, _, name = await pool_with_nodes(client, scheduling_plane, {"a": 2, "b": 2})
        for job in ("first", "second"):
            await create_job(client, pool, job, 2, scheduler=name, group="coscheduling")
        async with running_scheduler(client, pool, name):

            async def one_whole_gang() -> bool:
                counts = [await bound_count(client, pool, job) for job in ("first", "second")]
                return sorted(counts) == [0, 3]

            await eventually(one_whole_gang, what="one gang bound whole")
            counts = {job: await bound_count(client, pool, job) for job in ("first", "second")}
            waiting = next(job for job, count in counts.items() if count == 0)
            await eventually(
                lambda: has_event(
                    client, pool, about=f"{waiting}-master-0", reason="FailedScheduling"
                ),
                what="FailedScheduling on the waiting gang",
            )
            events = await client.list(Event, namespace=pool)
            notes = [
                e.note or ""
                for e in events.items
                if e.reason == "FailedScheduling"
                and e.regarding
                and e.regarding.name == f"{waiting}-master-0"
            ]
            assert any("not now" in note for note in notes), notes
            group = await client.get(CoschedulingPodGroup, waiting, namespace=pool)
            assert group.status is not None
            assert group.status.phase == "Pending"
            # Still no partial binding after the scheduler had every chance.
            assert await bound_count(client, pool, waiting) == 0

            # Deleting one pod of the running gang frees its node at once: the waiting gang
            # still needs 3 and now 2 are free, so it keeps waiting; deleting a second one lets
            # it in, whole.
            running = next(job for job in counts if job != waiting)
            for index in (0, 1):
                await client.delete(
                    Pod, f"{running}-worker-{index}", namespace=pool, grace_period_seconds=0
                )
            await eventually(
                lambda: bound_count_is(client, pool, waiting, 3),
                what="the waiting gang bound whole",
            )


async def test_a_pod_without_a_group_is_a_gang_of_one(scheduling_plane: ControlPlane) -> None:
    async with Client.from_control_plane(scheduling_plane) as client:
        pool, _, name = await pool_with_nodes(client, scheduling_plane, {"a": 1})
        (pod,) = [p for p in pytorchjob_pods("solo", pool, 0, scheduler=name, group="none")]
        await client.create(pod)
        async with running_scheduler(client, pool, name):
            await eventually(lambda: all_bound(client, pool, "solo"), what="the pod bound")


async def test_a_gang_short_of_pods_or_of_its_podgroup_waits_and_says_why(
    scheduling_plane: ControlPlane,
) -> None:
    async with Client.from_control_plane(scheduling_plane) as client:
        pool, _, name = await pool_with_nodes(client, scheduling_plane, {"a": 5})
        await create_job(client, pool, "short", 2, scheduler=name, min_member=5, tier=None)
        await create_all(
            client, pytorchjob_pods("orphan", pool, 1, scheduler=name, group="volcano")
        )
        async with running_scheduler(client, pool, name):
            await eventually(
                lambda: has_event(client, pool, about="short-master-0", note="3 of the 5 pods"),
                what="the short gang's reason",
            )
            await eventually(
                lambda: has_event(client, pool, about="orphan-master-0", note="PodGroupNotFound"),
                what="the missing PodGroup's reason",
            )
            assert await bound_count(client, pool, "short") == 0
            assert await bound_count(client, pool, "orphan") == 0
            # The missing pods arrive (as a controller would create them): the gang goes.
            extra = pytorchjob_pods("short", pool, 4, scheduler=name, group="volcano")[3:]
            await create_all(client, extra)
            await eventually(
                lambda: bound_count_is(client, pool, "short", 5), what="the gang bound"
            )
