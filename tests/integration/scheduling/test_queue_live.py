"""The gang scheduler's queue on the real apiserver: a whole-rack gang under a stream of small
pods holds a rack and binds there as soon as it drains, and pods held by Kueue's admission gate
wait until the gate is removed.

Nothing runs a kubelet: a small pod "finishes" by being deleted.
"""

from __future__ import annotations

import time

import pytest
from _cluster import (
    RACK,
    all_bound,
    create_job,
    has_event,
    pods_of,
    pool_with_nodes,
    running_scheduler,
    small_pod,
)

from crdkit.client import Client
from crdkit.resources import Event, Pod
from crdkit.testing import ControlPlane, eventually

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

HOST = "kubernetes.io/hostname"
KUEUE_GATE = "kueue.x-k8s.io/admission"


async def node_of(client: Client, namespace: str, name: str) -> str | None:
    return (await client.get(Pod, name, namespace=namespace)).spec.node_name


async def told_to_wait(client: Client, namespace: str, name: str) -> bool:
    return await has_event(client, namespace, about=name, reason="FailedScheduling")


async def test_a_whole_rack_gang_binds_under_a_stream_of_small_pods(
    scheduling_plane: ControlPlane,
) -> None:
    async with Client.from_control_plane(scheduling_plane) as client:
        pool, nodes, name = await pool_with_nodes(client, scheduling_plane, {"a": 2, "b": 2})
        async with running_scheduler(client, pool, name) as scheduler:
            # One small pod in each rack: no rack is free for the gang.
            for index, node in enumerate((nodes[0], nodes[2])):
                await client.create(small_pod(f"s{index}", pool, name, nodeSelector={HOST: node}))
            for index in range(2):
                await eventually(
                    lambda i=index: _bound(client, pool, f"s{i}"), what=f"s{index} bound"
                )
            created = time.monotonic()
            await create_job(client, pool, "big", 1, scheduler=name)

            async def reserved() -> bool:
                return bool(scheduler.reservations)

            await eventually(reserved, what="the gang holding a rack")
            (reservation,) = scheduler.reservations.values()
            held_rack = reservation.domain
            # The stream: each small pod that arrives finds room outside the held rack or
            # waits; the oldest small pod finishes after each arrival.
            running = [("s0", nodes[0]), ("s1", nodes[2])]
            bound_at_step = None
            for step in range(2, 8):
                pod = f"s{step}"
                await client.create(small_pod(pod, pool, name))
                await eventually(
                    lambda p=pod: _bound_or_told(client, pool, p), what=f"{pod} bound or waiting"
                )
                node = await node_of(client, pool, pod)
                if node is not None:
                    assert not node.startswith(f"{held_rack}-"), f"{pod} took a held node"
                    running.append((pod, node))
                oldest, on = running.pop(0)
                await client.delete(Pod, oldest, namespace=pool, grace_period_seconds=0)
                if on.startswith(f"{held_rack}-"):
                    # The held rack's last small pod finished: the gang binds there next.
                    await eventually(lambda: _gang_bound(client, pool), what="the gang bound")
                    bound_at_step = step
                    break
            waited = time.monotonic() - created
            assert bound_at_step is not None, "the gang starved under the stream"
            racks = {
                (p.spec.node_name or "").rsplit("-n", 1)[0]
                for p in await pods_of(client, pool, "big")
            }
            assert racks == {held_rack}
            assert scheduler.reservations == {} or all(
                r.holder != f"volcano/{pool}/big" for r in scheduler.reservations.values()
            )
            print(
                f"whole-rack gang bound {waited:.2f} s after its creation, at step {bound_at_step}"
            )
        assert RACK


async def test_a_pod_behind_kueues_admission_gate_waits_until_the_gate_is_removed(
    scheduling_plane: ControlPlane,
) -> None:
    async with Client.from_control_plane(scheduling_plane) as client:
        pool, _, name = await pool_with_nodes(client, scheduling_plane, {"a": 1})
        async with running_scheduler(client, pool, name):
            await client.create(
                small_pod("gated", pool, name, schedulingGates=[{"name": KUEUE_GATE}])
            )
            await eventually(
                lambda: told_to_wait(client, pool, "gated"), what="the gated pod told it waits"
            )
            events = await client.list(Event, namespace=pool)
            notes = [e.note or "" for e in events.items if e.reason == "FailedScheduling"]
            assert any("SchedulingGated" in n and KUEUE_GATE in n for n in notes), notes
            assert await node_of(client, pool, "gated") is None
            # Kueue admits the workload by removing its gate (the apiserver allows only that).
            await client.patch(Pod, "gated", {"spec": {"schedulingGates": None}}, namespace=pool)
            await eventually(lambda: _bound(client, pool, "gated"), what="bound once ungated")


async def _bound(client: Client, namespace: str, name: str) -> bool:
    return await node_of(client, namespace, name) is not None


async def _bound_or_told(client: Client, namespace: str, name: str) -> bool:
    return await _bound(client, namespace, name) or await told_to_wait(client, namespace, name)


async def _gang_bound(client: Client, namespace: str) -> bool:
    pods = await pods_of(client, namespace, "big")
    return len(pods) == 2 and all(p.spec.node_name for p in pods)


async def test_a_high_priority_gang_preempts_a_whole_low_priority_gang(
    scheduling_plane: ControlPlane,
) -> None:
    async with Client.from_control_plane(scheduling_plane) as client:
        # one rack of two 8-GPU nodes
        pool, _, name = await pool_with_nodes(client, scheduling_plane, {"a": 2})
        # The apiserver's Priority admission resolves the classes into spec.priority (and
        # spec.preemptionPolicy); pods may not set the number themselves.
        for klass, value in ((f"{pool}-low", 10), (f"{pool}-high", 1000)):
            await client.create(
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": klass},
                    "value": value,
                }
            )
        async with running_scheduler(client, pool, name) as scheduler:
            await create_job(
                client, pool, "low", 1, scheduler=name, priorityClassName=f"{pool}-low"
            )
            await eventually(lambda: all_bound(client, pool, "low"), what="the low gang bound")
            created = time.monotonic()
            await create_job(
                client, pool, "high", 1, scheduler=name, priorityClassName=f"{pool}-high"
            )

            async def low_evicted() -> bool:
                pods = await pods_of(client, pool, "low")
                return len(pods) == 2 and all(p.metadata.deletion_timestamp for p in pods)

            # Both pods of the victim go (never one), with their grace period...
            await eventually(low_evicted, what="the whole low gang evicted")
            events = await client.list(Event, namespace=pool)
            preempted = {
                e.regarding.name
                for e in events.items
                if e.reason == "Preempted" and e.regarding and "high" in (e.note or "")
            }
            assert preempted == {"low-master-0", "low-worker-0"}
            waiting = await pods_of(client, pool, "high")
            assert len(waiting) == 2
            assert not any(p.spec.node_name for p in waiting)  # not before the victims go
            # ...which, with no kubelet here, this test confirms as the kubelet would.
            for pod in await pods_of(client, pool, "low"):
                await client.delete(
                    Pod, pod.metadata.name or "", namespace=pool, grace_period_seconds=0
                )
            await eventually(lambda: all_bound(client, pool, "high"), what="the preemptor bound")
            waited = time.monotonic() - created
            assert scheduler.reservations == {}
            print(
                f"preemptor bound {waited:.2f} s after its creation (victims: low-master-0, "
                "low-worker-0)"
            )
