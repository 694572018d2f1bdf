"""Crash consistency of ``OwnGangs.place_and_create`` (issue 43): the README's TrainingJob
operator, which creates each job's master and workers already bound under one rack, all or
nothing, killed at each of its writes on a real apiserver (crdkit.testing.crashes).

Two racks of two 8-GPU nodes; three jobs of two pods: two fit at once, the third waits for a
rack to finish. The workload plays the users and the kubelet: it creates the jobs and reports
a job's pods ``Succeeded`` once all of them exist, bound (a training job's ranks only get going
together). Every write of the fault-free run (the pods' creates, the jobs' status writes; no
Events) is explored with every fault kind: a few dozen cases of a few seconds each. Invariants:

- ``no_partial_gang_left``: no job is left with some of its pods made and not others;
- ``pods_created_bound``: every pod exists bound from its create on (none is bound later, or
  twice).

A partial gang the restart leaves behind is rolled back (its pods deleted) and made again
whole: the pods made again under their names are accepted by the recreation oracle
(``Scenario.recreatable``). Which rack frees first is up to timing, so which job lands where
may differ from the fault-free run: the end states compare that pods are bound and jobs
placed, not where (``Scenario.end_view``).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from _cluster import BLOCK, POOL, RACK, make_nodes, new_pool
from _crash_pool import PoolTarget, finish
from examples.training_job.operator import (
    JOB_LABEL,
    TrainingJob,
    TrainingJobReconciler,
    TrainingJobSpec,
)

from crdkit.client import Client
from crdkit.crd import build_crd
from crdkit.resources import ObjectMeta, Pod
from crdkit.runtime.manager import Manager
from crdkit.testing import ControlPlane
from crdkit.testing.crashes import CrashExplorer, CrashReport, History, Scenario
from crdkit.testing.sim.managers import virtual_clock_manager

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]

JOBS = {"j1": 1, "j2": 1, "j3": 1}
"""Job name → workers (and a master): pods of 8 GPUs, one a node."""


def operator(pool: str) -> Any:
    def build(client: Client, namespace: str) -> Manager:
        manager = virtual_clock_manager(client)
        manager.add(TrainingJobReconciler(levels=[BLOCK, RACK], node_selector=f"{POOL}={pool}"))
        return manager

    return build


async def workload(client: Client, namespace: str) -> None:
    for name, workers in JOBS.items():
        spec = TrainingJobSpec(image="trainer:1", workers=workers, rack_level=RACK)
        await client.create(
            TrainingJob(metadata=ObjectMeta(name=name, namespace=namespace), spec=spec)
        )
    finished: set[str] = set()
    while len(finished) < len(JOBS):
        pods = (await client.list(Pod, namespace=namespace)).items
        for name, workers in JOBS.items():
            mine = [p for p in pods if (p.metadata.labels or {}).get(JOB_LABEL) == name]
            if name in finished or len(mine) < workers + 1:
                continue
            if all(p.spec.node_name for p in mine) and await finish(client, mine):
                finished.add(name)
        await asyncio.sleep(0.2)


def placed_somewhere(obj: dict[str, Any]) -> dict[str, Any]:
    """The end state as it counts: a pod bound (to whichever node), a job placed (in whichever
    rack). Which rack frees first, so which job goes where, is up to timing in any run."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    if spec.get("nodeName"):
        spec["nodeName"] = "<node>"
    if status.get("rack"):
        status["rack"] = "<rack>"
    return obj


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("labels") or {})


def no_partial_gang_left(history: History) -> list[str]:
    have: dict[str, int] = {}
    for obj in history.end_state:
        if obj.get("kind") == "Pod":
            job = _labels(obj).get(JOB_LABEL, "?")
            have[job] = have.get(job, 0) + 1
    return [
        f"job {job} is left with {count} of its {JOBS[job] + 1} pods"
        for job, count in sorted(have.items())
        if job in JOBS and count != JOBS[job] + 1
    ]


def pods_created_bound(history: History) -> list[str]:
    nodes: dict[str, str | None] = {}
    problems = []
    for event in history.events:
        if event.kind != "Pod" or event.type == "DELETED":
            continue
        node = (event.obj.get("spec") or {}).get("nodeName")
        if event.uid not in nodes:
            nodes[event.uid] = node
            if not node:
                problems.append(f"pod {event.key[2]} was created unbound")
        elif nodes[event.uid] != node:
            problems.append(f"pod {event.key[2]} moved from {nodes[event.uid]} to {node}")
    return problems


async def explore(plane: ControlPlane, cases: list[str] | None = None) -> tuple[CrashReport, float]:
    pool = new_pool()
    await plane.install_crds([build_crd([TrainingJob])])
    async with Client.from_control_plane(plane) as client:
        await make_nodes(client, pool, {"a": 2, "b": 2})
    scenario = Scenario(
        operator=operator(pool),
        workload=workload,
        settle=2.0,
        timeout=60.0,
        invariants=(no_partial_gang_left, pods_created_bound),
        recreatable=frozenset({"Pod"}),
        end_view=placed_somewhere,
    )
    explorer = CrashExplorer(scenario, PoolTarget(plane, pool, [TrainingJob]), cases=cases)
    started = time.monotonic()
    report = await explorer.explore()
    return report, time.monotonic() - started


async def test_place_and_create_leaves_no_partial_gang_at_any_crash(
    scheduling_plane: ControlPlane,
) -> None:
    report, seconds = await explore(scheduling_plane)
    writes = "; ".join(str(w) for w in report.baseline.writes)
    print(f"{report.summary()}\n  in {seconds:.0f}s\n  writes: {writes}")
    report.raise_on_failure()
    assert sum(w.resource == "pods" for w in report.baseline.writes) == 6


async def rerun(plane: ControlPlane, case: str) -> None:
    report, _ = await explore(plane, [case])
    report.raise_on_failure()
    assert [r.outcome for r in report.results] == ["passed"]


async def test_kill_before_the_2nd_create_leaves_no_partial_gang(
    scheduling_plane: ControlPlane,
) -> None:
    # kill-before:2: j1's master was created bound, the operator died before its worker. The
    # restarted one found the master in its cache and took the job as made: the master held
    # its node for ever, for a job that never ran (issue 43). Now it is rolled back and the
    # job made whole.
    await rerun(scheduling_plane, "kill-before:2")


async def test_kill_after_the_1st_create_still_says_the_job_is_placed(
    scheduling_plane: ControlPlane,
) -> None:
    # kill-after:1: both creates of j1 went out together and landed; the operator died before
    # it wrote the job's status, and the restarted one returned on finding the pods: the job
    # stayed without a status for ever.
    await rerun(scheduling_plane, "kill-after:1")


async def test_stale_restart_after_the_2nd_create_does_not_roll_back_a_whole_gang(
    scheduling_plane: ControlPlane,
) -> None:
    # stale:2: restarted on a cache from before j1's worker was created, the operator saw j1
    # partial and deleted its master, though the job was whole and had run by then. A
    # rollback is judged on what the apiserver says, not the cache.
    await rerun(scheduling_plane, "stale:2")
