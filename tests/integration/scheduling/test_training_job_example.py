"""The README's TrainingJob operator: a master and workers placed as one gang under one rack,
by the few lines of scheduling code it has (the GangScheduler does the rest)."""

from __future__ import annotations

import asyncio

import pytest
from _cluster import POOL, RACK, make_nodes, new_pool, pods_of
from examples.training_job.operator import TrainingJob, TrainingJobReconciler, TrainingJobSpec
from prometheus_client import CollectorRegistry

from crdkit.client import Client
from crdkit.crd import build_crd
from crdkit.resources import ObjectMeta
from crdkit.runtime import Manager
from crdkit.testing import ControlPlane, eventually

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


async def test_a_training_job_is_bound_whole_under_one_rack(scheduling_plane: ControlPlane) -> None:
    pool = new_pool()
    async with Client.from_control_plane(scheduling_plane) as client:
        await scheduling_plane.install_crds([build_crd([TrainingJob])])
        await scheduling_plane.create_namespace(pool)
        # Two racks of 3 nodes: a master and 3 workers (one node each) fit in neither...
        await make_nodes(client, pool, {"a": 3, "b": 3})
        manager = Manager(
            client,
            metrics_bind_address="0",
            health_probe_bind_address="0",
            registry=CollectorRegistry(),
        )
        reconciler = TrainingJobReconciler(
            levels=["example.com/block", RACK], scheduler_name=pool, node_selector=f"{POOL}={pool}"
        )
        manager.add(reconciler)
        task = asyncio.create_task(manager.run())
        try:
            await manager.wait_ready()
            spec = TrainingJobSpec(image="trainer:1", workers=3, rack_level=RACK)
            await client.create(
                TrainingJob(metadata=ObjectMeta(name="big", namespace=pool), spec=spec)
            )
            small = TrainingJobSpec(image="trainer:1", workers=2, rack_level=RACK)
            await client.create(
                TrainingJob(metadata=ObjectMeta(name="small", namespace=pool), spec=small)
            )

            async def small_bound() -> bool:
                pods = await pods_of(client, pool, "small-")
                return len(pods) == 3 and all(p.spec.node_name for p in pods)

            await eventually(small_bound, what="the small job bound")
            small_pods = await pods_of(client, pool, "small-")
            racks = {(p.spec.node_name or "").rsplit("-n", 1)[0] for p in small_pods}
            assert len(racks) == 1  # one rack, whole
            # ...so the big one waits, wholly unbound, while the small one runs.
            big = await pods_of(client, pool, "big-")
            assert len(big) == 4
            assert not any(p.spec.node_name for p in big)
        finally:
            manager.stop()
            await task
