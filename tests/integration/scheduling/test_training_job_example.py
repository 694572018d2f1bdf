"""The README's TrainingJob operator, which makes its own gang: a master and workers created
bound under one rack (``OwnGangs``), nothing created for a job that does not fit, and a waiting
job placed as soon as room frees (the mirror's capacity events requeue it)."""

from __future__ import annotations

import pytest
from _cluster import POOL, RACK, make_nodes, new_pool, pods_of
from examples.training_job.operator import TrainingJob, TrainingJobReconciler, TrainingJobSpec

from crdkit.client import Client
from crdkit.crd import build_crd
from crdkit.resources import ObjectMeta, Pod
from crdkit.testing import ControlPlane, eventually, running_manager

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def _job(pool: str, name: str, workers: int) -> TrainingJob:
    spec = TrainingJobSpec(image="trainer:1", workers=workers, rack_level=RACK)
    return TrainingJob(metadata=ObjectMeta(name=name, namespace=pool), spec=spec)


async def test_a_training_job_is_created_bound_whole_and_waits_for_room(
    scheduling_plane: ControlPlane,
) -> None:
    pool = new_pool()
    async with Client.from_control_plane(scheduling_plane) as client:
        await scheduling_plane.install_crds([build_crd([TrainingJob])])
        await scheduling_plane.create_namespace(pool)
        # Two racks of 3 nodes, one 8-GPU pod a node: a job of 3 fills a rack, 4 never fits.
        await make_nodes(client, pool, {"a": 3, "b": 3})
        reconciler = TrainingJobReconciler(
            levels=["example.com/block", RACK], node_selector=f"{POOL}={pool}"
        )
        async with running_manager(client, reconcilers=[reconciler]):
            for name, workers in (("first", 2), ("second", 2), ("big", 3)):
                await client.create(_job(pool, name, workers))

            async def settled() -> bool:
                jobs = {
                    j.metadata.name: j
                    for j in (await client.list(TrainingJob, namespace=pool)).items
                }
                phases = {n: (j.status.phase if j.status else None) for n, j in jobs.items()}
                return phases == {"first": "Placed", "second": "Placed", "big": "NeverFits"}

            await eventually(settled, what="two jobs placed, the big one never fits")
            for name in ("first", "second"):
                pods = await pods_of(client, pool, f"{name}-")
                assert len(pods) == 3
                assert all(p.spec.node_name for p in pods)  # created bound, by the operator
                racks = {(p.spec.node_name or "").rsplit("-n", 1)[0] for p in pods}
                assert len(racks) == 1  # one rack, whole
            assert await pods_of(client, pool, "big-") == []  # nothing made for what cannot fit
            big = await client.get(TrainingJob, "big", namespace=pool)
            assert big.status is not None
            assert big.status.message.startswith(
                "never fits this cluster, even with every node empty: "
            )

            # A third job of 3 waits for a rack; the first job's pods finish and free theirs.
            await client.create(_job(pool, "third", 2))

            async def waiting() -> bool:
                job = await client.get(TrainingJob, "third", namespace=pool)
                return job.status is not None and job.status.phase == "Waiting"

            await eventually(waiting, what="the third job waits")
            assert await pods_of(client, pool, "third-") == []
            assert job_message_is_not_now(await client.get(TrainingJob, "third", namespace=pool))
            for pod in await pods_of(client, pool, "first-"):
                await client.patch(
                    Pod,
                    pod.metadata.name or "",
                    {"status": {"phase": "Succeeded"}},
                    namespace=pool,
                    subresource="status",
                )

            async def third_placed() -> bool:
                pods = await pods_of(client, pool, "third-")
                return len(pods) == 3 and all(p.spec.node_name for p in pods)

            await eventually(third_placed, what="the third job placed once room freed")
            first_nodes = {p.spec.node_name for p in await pods_of(client, pool, "first-")}
            third_nodes = {p.spec.node_name for p in await pods_of(client, pool, "third-")}
            assert third_nodes == first_nodes  # the rack the first job left


def job_message_is_not_now(job: TrainingJob) -> bool:
    return job.status is not None and job.status.message.startswith("not now: ")
