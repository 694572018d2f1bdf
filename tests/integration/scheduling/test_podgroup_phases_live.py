"""A coscheduling PodGroup's phase follows its gang through a pod's life, driven by a simulated
kubelet in order (never by waiting): Pending while unplaced, Running once the kubelet starts
the bound pods, Finished once they all succeed."""

from __future__ import annotations

import pytest
from _cluster import create_job, pods_of, pool_with_nodes, running_scheduler

from crdkit.client import Client
from crdkit.scheduling.groups.coscheduling import CoschedulingPodGroup
from crdkit.testing import ControlPlane, SimulatedKubelet, eventually

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


async def test_the_podgroup_phase_follows_the_gang(scheduling_plane: ControlPlane) -> None:
    async with Client.from_control_plane(scheduling_plane) as client:
        pool, nodes, name = await pool_with_nodes(client, scheduling_plane, {"a": 3})
        await create_job(client, pool, "job", 2, scheduler=name, group="coscheduling")

        async def phase_is(phase: str) -> bool:
            group = await client.get(CoschedulingPodGroup, "job", namespace=pool)
            return group.status is not None and group.status.phase == phase

        async with (
            SimulatedKubelet(client, namespace=pool, nodes=set(nodes).__contains__) as kubelet,
            running_scheduler(client, pool, name),
        ):
            await eventually(lambda: phase_is("Running"), what="the PodGroup Running")
            pods = await pods_of(client, pool, "job")
            assert all(p.status is not None and p.status.phase == "Running" for p in pods)
            group = await client.get(CoschedulingPodGroup, "job", namespace=pool)
            assert group.status is not None
            assert group.status.running == 3
            await kubelet.finish(pods, "Succeeded")
            await eventually(lambda: phase_is("Finished"), what="the PodGroup Finished")
            group = await client.get(CoschedulingPodGroup, "job", namespace=pool)
            assert group.status is not None
            assert group.status.succeeded == 3
