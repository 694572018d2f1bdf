"""A saturated mixed workload through `GangScheduler`, on the fake cluster and a virtual clock.

    python benches/queue_sim_bench.py --nodes 256 --seeds 7,8,9 --json

The whole workload, not one decision: ``--nodes`` 8-GPU nodes in leaves of 16; jobs of 1, 2,
4, 8 or 16 pods of 8 GPUs (35/30/20/10/5 %), jobs of 8 pods or more requiring one leaf (Kueue's
``podset-required-topology``), smaller ones preferring it; jobs are drawn until their pods
want ``--load`` times the cluster's GPUs, and all are submitted at once. Each job runs 20-40 s
(seeded) from the moment a simulated kubelet sees its pods bound, and its pods end one after
another, ``--end-spread`` seconds apart (0.05 by default, as a job's pods reach the scheduler
as separate events; 0: all in one instant, which no apiserver delivers). ``--rate`` submits
them as a Poisson stream of that many jobs per second instead (waits count from each job's submit).
The same stream runs once per ``--variants`` entry:

- ``reservations``: the scheduler as shipped (the head of each priority holds room);
- ``no-reservations``: the same scheduler with ``reservations_per_priority=0``;
- ``no-settling``: the same scheduler with ``settle_seconds=0``: the nodes a job frees are
  placed on as each frees, not held until the rest of the job has ended;
- ``fifo``: the same scheduler with ``size_credit=0``: first come, first served within a
  priority, no head start for bigger gangs;
- ``reservations-4``: the same scheduler with ``reservations_per_priority=4``: the first four
  gangs in line each hold room;
- ``start-plan``: the same scheduler with ``start_plan=True``: once run times are declared
  (``--hints``), every waiting gang is promised a start and none is delayed by backfill
  (without ``--hints`` the same as ``reservations``).

``--policies best-fit,keep-whole`` runs each variant under each placer policy. ``--small-pods``
makes every single-pod job ask for 1, 2 or 4 GPUs (drawn) instead of a whole node, the mix in
which capacity fragments and the policies differ.

What is measured is the scheduling policy: the fake apiserver answers at once and the clock is
virtual (it jumps to the next timer whenever every task waits), so the figures are seconds of
simulated time, exact and repeatable, not the apiserver's or the placer's speed. Placement runs
on the event loop (not a worker thread) so the virtual clock cannot move while it computes.

Per variant and seed: ``makespan_s`` (submit to the last job done), ``lower_bound_s``
(GPU-seconds of work over the cluster's GPUs), ``gpu_in_bound_jobs_pct`` (mean share of GPUs
held by fully bound jobs, from submit until the last job is bound), ``wait_p50_s``/``p99``/
``max`` (submit to all pods bound) overall and by job size, ``leaf_jobs_in_one_leaf_pct``,
and ``partly_bound_max_s`` (longest time a job had some but not all pods bound).
``decisions_sha256`` digests every job's bind time and nodes, so two builds of the scheduler can
be shown to decide the same; ``--decisions FILE`` writes those decisions out, a line per job.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from prometheus_client import CollectorRegistry

from crdkit.client import Client
from crdkit.placer.cluster import Policy
from crdkit.placer.policies import POLICIES
from crdkit.resources import Node, Pod
from crdkit.runtime import Manager
from crdkit.scheduling import GangScheduler
from crdkit.scheduling.gangs import KUEUE_PREFERRED, KUEUE_REQUIRED
from crdkit.scheduling.groups import GROUP_APIS
from crdkit.scheduling.groups.coscheduling import COSCHEDULING_POD_GROUP_LABEL, CoschedulingPodGroup
from crdkit.scheduling.mirror import ClusterMirror
from crdkit.testing import FakeCluster, FakeKind, SimulatedKubelet
from crdkit.testing.sim.nodes import simulated_node
from crdkit.testing.sim.virtual_time import run_on_virtual_clock

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _job_stream import GPUS, LEAF, NAMESPACE, SIZES, hint_seconds, percentile
from _job_stream import Job as StreamJob
from _job_stream import stream as job_stream

SCHEDULER = "gangs"
VIRTUAL_EPOCH = 1_800_000_000.0
"""Where the virtual wall clock starts (epoch seconds): fixed, so that runs repeat."""


@dataclass
class Job(StreamJob):
    nodes: list[str] = field(default_factory=list)
    submitted: float = 0.0


def stream(nodes: int, load: float, seed: int, small_pods: bool = False) -> list[Job]:
    """The seeded job mix (`_job_stream.stream`); with ``small_pods`` every single-pod job asks
    for 1, 2 or 4 GPUs (drawn) instead of a whole node, so capacity fragments inside nodes and
    leaves."""
    return job_stream(Job, nodes, load, seed, small_pods)


def job_objects(job: Job, hint: int | None = None) -> list[Any]:
    group = CoschedulingPodGroup.model_validate(
        {"metadata": {"name": job.name, "namespace": NAMESPACE}, "spec": {"minMember": job.pods}}
    )
    topology = KUEUE_REQUIRED if job.pods >= 8 else KUEUE_PREFERRED
    pods = [
        Pod.model_validate(
            {
                "metadata": {
                    "name": f"{job.name}-{index}",
                    "namespace": NAMESPACE,
                    "labels": {COSCHEDULING_POD_GROUP_LABEL: job.name},
                    "annotations": {topology: LEAF},
                },
                "spec": {
                    "schedulerName": SCHEDULER,
                    "containers": [
                        {"name": "c", "resources": {"requests": {"nvidia.com/gpu": str(job.gpus)}}}
                    ],
                    **({} if hint is None else {"activeDeadlineSeconds": hint}),
                },
            }
        )
        for index in range(job.pods)
    ]
    return [group, *pods]


VARIANTS: dict[str, dict[str, Any]] = {
    "reservations": {},
    "no-reservations": {"reservations_per_priority": 0},
    "no-settling": {"settle_seconds": 0.0},
    "fifo": {"size_credit": 0.0},
    "reservations-4": {"reservations_per_priority": 4},
    "start-plan": {"start_plan": True},
}
"""Each variant's arguments to `GangScheduler` beside the shipped defaults."""


async def add_leaf_nodes(client: Client, nodes: int) -> dict[str, str]:
    """``nodes`` Ready 8-GPU nodes in leaves of 16 (`LEAF`); each node's leaf."""
    node_leaf: dict[str, str] = {}
    for index in range(nodes):
        name, leaf = f"n{index:05d}", f"l{index // 16:03d}"
        node_leaf[name] = leaf
        node = simulated_node(name, labels={LEAF: leaf})
        await client.create(node)
        status = node.model_dump(mode="json", by_alias=True)["status"]
        await client.patch(Node, name, {"status": status}, subresource="status")
    return node_leaf


def simulated_scheduler(
    client: Client, wall_clock: Callable[[], float], **options: Any
) -> tuple[Manager, GangScheduler]:
    """A Manager with `GangScheduler` added (``options`` beside these), on the running loop's
    clock: placement on the event loop and no pass pause, so the virtual clock cannot move
    while a pass computes."""
    loop = asyncio.get_running_loop()
    manager = Manager(
        client, metrics_bind_address="0", health_probe_bind_address="0",
        registry=CollectorRegistry(),
    )  # fmt: skip
    mirror = ClusterMirror([LEAF], clock=loop.time, place_inline=True)
    mirror.attach(manager)
    scheduler = GangScheduler(
        SCHEDULER,
        [LEAF],
        pod_groups=("coscheduling",),
        clock=loop.time,
        wall_clock=wall_clock,
        mirror=mirror,
        pass_pause=0.0,  # a pause of the pass's real duration would move the virtual clock
        **options,
    )
    manager.add_runnable(scheduler)
    return manager, scheduler


async def run(
    nodes: int,
    jobs: list[Job],
    variant: str,
    rate: float,
    policy: Policy = "best-fit",
    end_spread: float = 0.0,
    hints: bool = False,
) -> dict[str, Any]:
    loop = asyncio.get_running_loop()

    def wall_clock() -> float:
        # Epoch seconds on the virtual clock, from a fixed start: the start times the kubelet
        # reports and the scheduler's "now" agree, and every run decides the same.
        return VIRTUAL_EPOCH + loop.time()

    status = GROUP_APIS["coscheduling"].status_subresource
    cluster = FakeCluster(kinds=[FakeKind.of_crd(CoschedulingPodGroup, status_subresource=status)])
    by_pod = {f"{job.name}-{i}": job for job in jobs for i in range(job.pods)}
    async with cluster.client() as client:
        node_leaf = await add_leaf_nodes(client, nodes)
        manager, scheduler = simulated_scheduler(
            client, wall_clock, policy=policy, **VARIANTS[variant]
        )
        done = asyncio.Event()
        finished: list[float] = []
        held: list[tuple[float, int]] = []  # (time, GPUs of fully bound jobs, +/-)

        def started(pod: Pod) -> None:
            job = by_pod[pod.metadata.name or ""]
            now = loop.time()
            job.bound.add(pod.metadata.name or "")
            job.nodes.append(pod.spec.node_name or "")
            if job.first_bound is None:
                job.first_bound = now
            if len(job.bound) == job.pods:
                job.all_bound = now
                end = now + job.seconds + (job.pods - 1) * end_spread
                held.append((now, job.pods * job.gpus))
                held.append((end, -job.pods * job.gpus))
                finished.append(end)
                if len(finished) == len(jobs):
                    done.set()

        def run_for(pod: Pod) -> float:
            name = pod.metadata.name or ""
            index = int(name.rsplit("-", 1)[1])  # pods are named <job>-<index>
            return by_pod[name].seconds + index * end_spread

        task = asyncio.create_task(manager.run())
        await manager.wait_ready()
        async with SimulatedKubelet(
            client, namespace=NAMESPACE, run_for=run_for, on_start=started, wall_clock=wall_clock
        ):
            submitted = loop.time()
            gaps = random.Random(len(jobs))
            for job in jobs:
                if rate > 0:
                    await asyncio.sleep(gaps.expovariate(rate))  # a Poisson stream
                job.submitted = loop.time()
                hint = hint_seconds(job.seconds + (job.pods - 1) * end_spread) if hints else None
                for obj in job_objects(job, hint):
                    await client.create(obj)
            try:
                await asyncio.wait_for(done.wait(), timeout=100_000)
            except TimeoutError:
                bound = sum(len(j.bound) for j in jobs)
                raise SystemExit(
                    f"stuck: {bound} pods bound, {scheduler.passes} passes, "
                    f"{len(finished)} of {len(jobs)} jobs done"
                ) from None
        manager.stop()
        await task
    plan = scheduler.start_plan
    kept, late = (0, 0) if plan is None else (plan.kept, plan.late)
    last_bound = max(job.all_bound or 0.0 for job in jobs)
    # Mean GPUs in fully bound jobs from submit until the last job is bound.
    area, level, at = 0.0, 0, submitted
    for when, delta in sorted(held):
        if when > last_bound:
            break
        area += level * (when - at)
        level, at = level + delta, when
    area += level * (last_bound - at)
    window = max(last_bound - submitted, 1e-9)
    waits = {job.name: (job.all_bound or 0.0) - job.submitted for job in jobs}
    by_size = {
        str(size): {
            "p50_s": round(percentile([waits[j.name] for j in jobs if j.pods == size], 0.5), 1),
            "max_s": round(max([waits[j.name] for j in jobs if j.pods == size] or [0.0]), 1),
        }
        for size in SIZES
    }
    leaf_jobs = [job for job in jobs if job.pods >= 8]
    in_one_leaf = sum(len({node_leaf[n] for n in job.nodes}) == 1 for job in leaf_jobs)
    work = sum(job.pods * job.gpus * job.seconds for job in jobs)
    decisions = [
        {
            "job": job.name,
            "bound_s": round((job.all_bound or 0.0) - submitted, 6),
            "nodes": sorted(job.nodes),
        }
        for job in jobs
    ]
    makespan, lower_bound = max(finished) - submitted, work / (nodes * GPUS)
    return {
        "makespan_s": round(makespan, 1),
        "lower_bound_s": round(lower_bound, 1),
        "lower_bound_ratio": round(makespan / lower_bound, 3),
        "gpu_in_bound_jobs_pct": round(100 * area / window / (nodes * GPUS), 1),
        "wait_p50_s": round(percentile(list(waits.values()), 0.5), 1),
        "wait_p99_s": round(percentile(list(waits.values()), 0.99), 1),
        "wait_max_s": round(max(waits.values()), 1),
        "wait_by_size": by_size,
        "leaf_jobs_in_one_leaf_pct": round(100 * in_one_leaf / max(len(leaf_jobs), 1), 1),
        "partly_bound_max_s": round(
            max((job.all_bound or 0.0) - (job.first_bound or 0.0) for job in jobs), 3
        ),
        "passes": scheduler.passes,
        "promises_kept": kept,
        "promises_late": late,
        "decisions_sha256": hashlib.sha256(
            json.dumps(decisions, sort_keys=True).encode()
        ).hexdigest(),
        "decisions": decisions,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=256)
    parser.add_argument("--load", type=float, default=1.9, help="pods' GPUs over the cluster's")
    parser.add_argument("--seeds", default="7,8,9")
    parser.add_argument("--variants", default="reservations,no-reservations")
    parser.add_argument(
        "--small-pods",
        action="store_true",
        help="single-pod jobs ask for 1, 2 or 4 GPUs instead of a whole node",
    )
    parser.add_argument(
        "--policies", default="best-fit", help=f"placer policies, comma-separated: {POLICIES}"
    )
    parser.add_argument(
        "--rate", type=float, default=0.0, help="jobs per second, Poisson (default: all at once)"
    )
    parser.add_argument(
        "--end-spread",
        type=float,
        default=0.05,
        help="seconds between the ends of one job's pods (0: all at once)",
    )
    parser.add_argument(
        "--decisions", type=Path, help="write each run's per-job bind times and nodes here"
    )
    parser.add_argument(
        "--hints",
        action="store_true",
        help="every pod declares its job's run time rounded up to the next 10 s "
        "(spec.activeDeadlineSeconds)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object (the default)")
    args = parser.parse_args()
    if args.nodes < 16 or args.nodes % 16:
        parser.error("--nodes: a positive multiple of 16 (whole leaves)")
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    for variant in variants:
        if variant not in VARIANTS:
            parser.error(f"--variants: unknown variant {variant!r} (one of {', '.join(VARIANTS)})")
    if args.end_spread < 0:
        parser.error("--end-spread: a number of seconds >= 0")
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    for policy in policies:
        if policy not in POLICIES:
            parser.error(f"--policies: unknown policy {policy!r} (one of {', '.join(POLICIES)})")
    results: list[dict[str, Any]] = []
    for seed in (int(s) for s in args.seeds.split(",")):
        for variant in variants:
            for policy in policies:
                jobs = stream(args.nodes, args.load, seed, args.small_pods)
                figures = run_on_virtual_clock(
                    run(
                        args.nodes,
                        jobs,
                        variant,
                        args.rate,
                        cast("Policy", policy),
                        args.end_spread,
                        args.hints,
                    )
                )
                decisions = figures.pop("decisions")
                if args.decisions is not None:
                    with args.decisions.open("a") as out:
                        for line in decisions:
                            out.write(json.dumps({"seed": seed, "variant": variant,
                                                  "policy": policy, **line}) + "\n")  # fmt: skip
                results.append(
                    {"seed": seed, "variant": variant, "policy": policy, "jobs": len(jobs),
                     "pods": sum(j.pods for j in jobs), **figures}
                )  # fmt: skip
                print(json.dumps(results[-1]), file=sys.stderr)

    def mean(figure: str, variant: str, policy: str) -> float:
        runs = [r for r in results if r["variant"] == variant and r["policy"] == policy]
        return round(statistics.mean(r[figure] for r in runs), 1)

    summary = {
        variant if len(policies) == 1 else f"{variant}/{policy}": {
            "makespan_s_mean": mean("makespan_s", variant, policy),
            "gpu_in_bound_jobs_pct_mean": mean("gpu_in_bound_jobs_pct", variant, policy),
            "lower_bound_ratio_mean": round(
                statistics.mean(
                    r["lower_bound_ratio"]
                    for r in results
                    if r["variant"] == variant and r["policy"] == policy
                ),
                3,
            ),
        }
        for variant in variants
        for policy in policies
    }
    print(
        json.dumps(
            {
                "nodes": args.nodes,
                "load": args.load,
                "small_pods": args.small_pods,
                "rate": args.rate,
                "end_spread_s": args.end_spread,
                "hints": args.hints,
                "runs": results,
                "summary": summary,
            }
        )
    )


if __name__ == "__main__":
    main()
