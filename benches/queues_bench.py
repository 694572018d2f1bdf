"""Three teams sharing one GPU cluster through crdkit's queues, on the fake cluster and a virtual
clock; the same stream without queues beside it.

    python benches/queues_bench.py --nodes 256 --seeds 7,8,9 --json

The cluster, the teams, their quotas and their jobs are `_queue_stream`'s: ``--nodes`` 8-GPU
nodes in leaves of 16, three queues ``team-a``, ``team-b`` (weight 1) and ``team-c`` (weight 2)
in the cohort ``org``, a quarter of the GPUs guaranteed to each and the last quarter the
cohort's; team-a and team-b submit their jobs at once, team-c ``RECLAIM_AT_S`` seconds later,
when the others have borrowed everything. Jobs of 8 pods or more require one leaf. A job whose
pods are evicted (a reclaim) is submitted again at once, whole, as a new attempt: the work is
still to be done, and the GPU-time the evicted attempt held is counted as held, not as useful.

Per variant (``queues``: crdkit with the queues; ``no-queues``: the same scheduler and stream
with no queue, first come first served) and seed:

- ``share_pct``: each team's share of the GPU-time held by whole jobs in the saturated window
  (from team-c's submit to the first time a team has no job left to start), against
  ``fair_share_pct`` (`_queue_stream.fair_shares`); ``share_gap_max_pts`` is the largest gap;
- ``reclaim_s``: for team-c's jobs that arrived under its nominal quota, submit to all bound
  (p50, max, count), and ``victim_grace_s``, the victims' grace period (0 on the fake cluster:
  the simulated kubelet ends a deleted pod at once);
- ``useful_gpu_pct``: GPUs held by whole jobs that then ran to their end, as a share of the
  cluster, over the saturated window; ``held_gpu_pct`` the same counting evicted attempts;
- ``evicted_jobs``: attempts evicted;
- ``admitted_not_placeable``: at the end of every pass, the gangs whose queue counted them
  while some of their pods were not bound (the most seen in one pass);
- ``makespan_s``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from crdkit.resources import Node, Pod
from crdkit.resources.queues import Queue
from crdkit.runtime import Manager
from crdkit.scheduling import GangScheduler
from crdkit.scheduling.gangs import KUEUE_PREFERRED, KUEUE_REQUIRED
from crdkit.scheduling.groups import GROUP_APIS
from crdkit.scheduling.groups.coscheduling import COSCHEDULING_POD_GROUP_LABEL, CoschedulingPodGroup
from crdkit.scheduling.mirror import ClusterMirror
from crdkit.scheduling.queues.gate import QUEUE_LABEL
from crdkit.testing import FakeCluster, FakeKind, SimulatedKubelet
from crdkit.testing.sim.nodes import simulated_node
from crdkit.testing.sim.virtual_time import run_on_virtual_clock

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _job_stream import LEAF, NAMESPACE, percentile
from _queue_stream import (
    COHORT,
    TEAMS,
    Span,
    TeamJob,
    fair_shares,
    gpu_time_shares,
    nominal_gpus,
    queue_stream,
    reclaim_latencies,
    saturated_window,
    useful_gpu_pct,
)

SCHEDULER = "gangs"
VIRTUAL_EPOCH = 1_800_000_000.0
VARIANTS = ("queues", "no-queues")


def queues(nodes: int) -> list[Queue]:
    """The cohort and the three teams' queues of `_queue_stream`."""
    gpus = nominal_gpus(nodes)

    def one(name: str, parent: str | None, weight: float) -> Queue:
        return Queue.model_validate(
            {
                "metadata": {"name": name},
                "spec": {
                    **({"parent": parent} if parent else {}),
                    "weight": weight,
                    "flavors": [
                        {
                            "name": "gpu",
                            "resources": [{"name": "nvidia.com/gpu", "nominal": gpus}],
                        }
                    ],
                },
            }
        )

    return [one(COHORT, None, 1.0), *(one(t.name, COHORT, t.weight) for t in TEAMS)]


def job_objects(job: TeamJob, attempt: int, with_queue: bool) -> list[Any]:
    name = job.name if attempt == 0 else f"{job.name}-r{attempt}"
    group = CoschedulingPodGroup.model_validate(
        {"metadata": {"name": name, "namespace": NAMESPACE}, "spec": {"minMember": job.pods}}
    )
    topology = KUEUE_REQUIRED if job.pods >= 8 else KUEUE_PREFERRED
    labels = {COSCHEDULING_POD_GROUP_LABEL: name}
    if with_queue:
        labels[QUEUE_LABEL] = job.team
    pods = [
        Pod.model_validate(
            {
                "metadata": {
                    "name": f"{name}-{index}",
                    "namespace": NAMESPACE,
                    "labels": labels,
                    "annotations": {topology: LEAF},
                },
                "spec": {
                    "schedulerName": SCHEDULER,
                    "containers": [
                        {"name": "c", "resources": {"requests": {"nvidia.com/gpu": str(job.gpus)}}}
                    ],
                },
            }
        )
        for index in range(job.pods)
    ]
    return [group, *pods]


async def run(nodes: int, jobs: list[TeamJob], variant: str) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    with_queues = variant == "queues"

    def wall_clock() -> float:
        return VIRTUAL_EPOCH + loop.time()

    status = GROUP_APIS["coscheduling"].status_subresource
    kinds = [FakeKind.of_crd(CoschedulingPodGroup, status_subresource=status)]
    kinds.append(FakeKind.of_crd(Queue, status_subresource=True))
    cluster = FakeCluster(kinds=kinds)
    by_group: dict[str, TeamJob] = {}
    attempts: dict[str, int] = {job.name: 0 for job in jobs}
    bound: dict[str, set[str]] = {}
    held: list[Span] = []
    useful: list[Span] = []
    evicted = 0
    worst_unplaced = 0
    async with cluster.client() as client:
        for index in range(nodes):
            name, leaf = f"n{index:05d}", f"l{index // 16:03d}"
            node = simulated_node(name, labels={LEAF: leaf})
            await client.create(node)
            body = node.model_dump(mode="json", by_alias=True)["status"]
            await client.patch(Node, name, {"status": body}, subresource="status")
        if with_queues:
            for made in queues(nodes):
                await client.create(made)
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
            pass_pause=0.0,
            queues=with_queues,
        )
        manager.add_runnable(scheduler)
        done = asyncio.Event()
        ended = 0
        succeeded: dict[str, set[str]] = {}
        """Per gang attempt, its pods that ended."""

        def group_of(pod: Pod) -> str:
            return (pod.metadata.labels or {})[COSCHEDULING_POD_GROUP_LABEL]

        def started(pod: Pod) -> None:
            group = group_of(pod)
            job = by_group[group]
            mine = bound.setdefault(group, set())
            mine.add(pod.metadata.name or "")
            if len(mine) == job.pods:
                job.all_bound = loop.time()

        def run_for(pod: Pod) -> float:
            return by_group[group_of(pod)].seconds

        async def submit(job: TeamJob) -> None:
            job.all_bound = None
            for obj in job_objects(job, attempts[job.name], with_queues):
                if isinstance(obj, CoschedulingPodGroup):
                    by_group[obj.metadata.name or ""] = job
                await client.create(obj)

        async def pod_gone(pod: Pod) -> None:
            nonlocal evicted
            group = group_of(pod)
            job = by_group[group]
            phase = pod.status.phase if pod.status else None
            if phase in ("Succeeded", "Failed") or job.ended is not None:
                return
            current = job.name if attempts[job.name] == 0 else f"{job.name}-r{attempts[job.name]}"
            if group != current:
                return  # a pod of an attempt already given up
            if job.all_bound is not None:
                held.append(Span(job.team, job.pods * job.gpus, job.all_bound, loop.time()))
            evicted += 1
            attempts[job.name] += 1
            bound.pop(group, None)
            await submit(job)

        def pod_ended(pod: Pod) -> None:
            nonlocal ended
            group = group_of(pod)
            job = by_group[group]
            if pod.status is None or pod.status.phase != "Succeeded" or job.ended is not None:
                return
            finished = succeeded.setdefault(group, set())
            finished.add(pod.metadata.name or "")
            if len(finished) < job.pods or job.all_bound is None:
                return
            job.ended = loop.time()
            span = Span(job.team, job.pods * job.gpus, job.all_bound, job.ended)
            held.append(span)
            useful.append(span)
            ended += 1
            if ended == len(jobs):
                done.set()

        informer = manager.informers.informer(Pod)
        informer.add_event_handler(
            None, lambda _old, new: pod_ended(new), lambda pod: asyncio.ensure_future(pod_gone(pod))
        )
        task = asyncio.create_task(manager.run())
        await manager.wait_ready()

        async def watch_passes() -> None:
            nonlocal worst_unplaced
            seen = 0
            while True:
                await asyncio.sleep(0.5)
                if scheduler.passes == seen or not with_queues:
                    continue
                seen = scheduler.passes
                gate = scheduler.quota_gate
                if gate is None:
                    continue
                unplaced = sum(
                    1
                    for text in gate.holdings
                    if text.split("/", 2)[2] in by_group
                    and len(bound.get(text.split("/", 2)[2], ()))
                    < by_group[text.split("/", 2)[2]].pods
                )
                worst_unplaced = max(worst_unplaced, unplaced)

        watcher = asyncio.create_task(watch_passes())
        async with SimulatedKubelet(
            client, namespace=NAMESPACE, run_for=run_for, on_start=started, wall_clock=wall_clock
        ):
            start = loop.time()
            for team in TEAMS:
                if team.submit_at_s:
                    await asyncio.sleep(start + team.submit_at_s - loop.time())
                for job in jobs:
                    if job.team == team.name:
                        job.arrived = loop.time()
                        await submit(job)
            await asyncio.wait_for(done.wait(), timeout=100_000)
        watcher.cancel()
        manager.stop()
        await task
    window = saturated_window(jobs, start)
    shares = gpu_time_shares(held, window)
    fair = fair_shares(nodes)
    latencies = reclaim_latencies(jobs, nodes)
    return {
        "share_pct": {team: round(100 * value, 1) for team, value in shares.items()},
        "fair_share_pct": {team: round(100 * value, 1) for team, value in fair.items()},
        "share_gap_max_pts": round(max(abs(100 * (shares[t] - fair[t])) for t in fair), 1),
        "window_s": [round(window[0] - start, 1), round(window[1] - start, 1)],
        "reclaim_s": {
            "p50": round(percentile(latencies, 0.5), 1),
            "max": round(max(latencies, default=0.0), 1),
            "count": len(latencies),
        },
        "victim_grace_s": 0.0,
        "useful_gpu_pct": round(useful_gpu_pct(useful, window, nodes), 1),
        "held_gpu_pct": round(useful_gpu_pct(held, window, nodes), 1),
        "evicted_jobs": evicted,
        "admitted_not_placeable": worst_unplaced,
        "makespan_s": round(max(job.ended or 0.0 for job in jobs) - start, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=256)
    parser.add_argument("--seeds", default="7,8,9")
    parser.add_argument(
        "--load", type=float, default=3.0, help="each team's jobs, in cluster-fulls of GPUs"
    )
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"nodes": args.nodes, "load": args.load, "runs": []}
    for seed in [int(s) for s in args.seeds.split(",")]:
        for variant in args.variants.split(","):
            jobs = queue_stream(args.nodes, args.load, seed)
            figures = run_on_virtual_clock(run(args.nodes, jobs, variant))
            out["runs"].append({"seed": seed, "variant": variant, **figures})
            if not args.json:
                print(seed, variant, figures, file=sys.stderr)
    for variant in args.variants.split(","):
        runs = [r for r in out["runs"] if r["variant"] == variant]
        out[f"{variant}_useful_gpu_pct_mean"] = round(
            statistics.mean(r["useful_gpu_pct"] for r in runs), 1
        )
    print(json.dumps(out, indent=2 if not args.json else None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
