"""Replays Alibaba's GPU pod trace over simulated time and compares placement policies on it.

    python benches/replay_bench.py [--time-scale 10000] [--jobs N] [--skip K] [--seed 7]

The fleet is the nodes of ``benches/data/openb_node_list_gpu_node.csv`` with 8 GPUs: 617 of
them (549 G2, 39 G3, 21 V100M32, 8 V100M16; 64-128 CPUs, 256-768 GiB), with the GPUs, CPU and
memory of the trace. The trace has no topology, so one is made up: the nodes sorted by name,
8 consecutive ones per leaf (``topology.crdkit.io/leaf``; 78 leaves, the last of one node, as
617 is prime) and 16 consecutive leaves per spine (``topology.crdkit.io/spine``; 5 spines, the
last of 14 leaves). A leaf of 8 holds the trace's largest gang of 8 whole-node pods.

The jobs are the rows of ``benches/data/openb_pod_list_default.csv`` that ask for GPUs
(the 1,088 rows without GPUs are left out: the fleet is the trace's GPU nodes, and what is
compared is how the GPUs fragment):

- Duration: ``deletion_time - scheduled_time``, or ``- creation_time`` for the pods never
  scheduled; the one row with a non-positive duration is dropped. Durations are never scaled.
- Arrival: ``creation_time``, counted from 10,000,000 s: the 53 GPU pods created earlier (the
  long-running services of the trace's first 10 million seconds) all arrive at 0, the other
  7,010 within the 2.9 million seconds after. ``--time-scale S`` divides the arrival times by S
  to compress the stream into a saturated cluster (durations unchanged). The default, 10,000,
  brings the arrivals into 290 s and makes jobs queue while the GPUs are full (with seed 7:
  jobs wait during 6 % of that window, up to 860 at once, with 97 % of the GPUs held); at
  1,000 no job waits, and at 20,000 the longest waits are of jobs that need particular nodes.
- Pods of 1-7 GPUs are single-pod jobs of that many GPUs; a pod of a GPU share (``gpu_milli``
  below 1000) counts as one whole GPU. Each asks for its row's CPU and memory.
- The trace has no gangs. The 44 rows of 8 GPUs, taken in creation order, are cut into
  consecutive gangs of 1, 2, 4 or 8 pods (drawn 40/30/20/10 % with ``--seed``, among the sizes
  the rows left can fill). A gang arrives with its first row, runs for the mean duration of its
  rows (which keeps the trace's GPU-seconds), and each of its pods asks for 8 GPUs and the CPU
  and memory of its own row (one task per distinct request: a pod of 120 CPUs fits only a G3,
  and its gang needs a leaf with one). Gangs of 4 or more pods require one leaf (topology mode
  ``required`` at the leaf), gangs of 2 prefer one (``preferred``); single pods are unconstrained.
- A job that some contestant cannot place on the empty cluster would never start, so it is
  dropped and counted (``dropped.fit_no_empty_cluster``; none with the defaults).

``--skip K --jobs N`` replay jobs K+1 to K+N in arrival order (``--jobs 0``: all);
``--leaves L`` replays on the first L leaves only (for smoke tests).

The replay is event-driven: a heap of arrivals and ends in simulated seconds, one contestant
at a time on its own cluster state, all on the very same jobs. At each instant the ends are
processed first, then the arrivals, then one pass of the queue: FIFO by arrival with backfill,
every waiting job is tried in order, and one that does not fit waits while later ones may
start (no reservations). A pass after an instant without ends tries only the jobs that
arrived then: the others did not fit before and the cluster has only filled since. A job that
asks at least as much as one that failed in the same pass (per pod and pods, under a
constraint at least as strict) is not tried: it cannot fit either. The contestants:

- ``crdkit``: `crdkit.placer.Cluster` with the policy ``keep-whole`` (first the number of free
  domains an entry would break, then best fit);
- ``best-fit``: the same placer with the policy ``best-fit``, its default;
- ``first-fit``: a baseline written here: each pod (those asking for the most CPU first) goes
  to the first node in name order with room; a gang that requires a leaf tries the leaves in
  name order and takes the first that holds all of its pods, placed first fit inside it; a gang
  that prefers a leaf is placed first fit over the whole cluster (first fit has no preference).

Per contestant (times in simulated seconds from the first arrival): ``makespan_s`` (to the
last end), ``last_start_s`` (when the last job started), waits from arrival to start (p50, p99,
max, overall and by gang size), ``free_leaves_mean`` (time-weighted mean number of leaves none
of whose nodes runs a pod, from the first to the last arrival),
``free_leaves_mean_while_waiting`` (the same over the times some job waits),
``multi_pod_in_one_leaf_pct`` (share of jobs of 2 or more pods whose pods are all in one leaf;
``multi_pod_jobs`` and ``multi_pod_in_one_leaf`` count them, ``leaf_required_jobs`` and
``leaf_required_in_one_leaf`` the same for the gangs that require a leaf),
``gpu_util_pct`` (mean share of the GPUs held, first to last arrival),
``gpu_util_while_waiting_pct`` (the same over the times some job waits), ``queue_mean`` and
``queue_max`` (waiting jobs, first to last arrival), ``waiting_time_pct`` (share of that window
with some job waiting), ``jobs_placed``, ``place_calls`` and ``run_s`` (real seconds of the
replay). For the stream: ``lower_bound_s`` (GPU-seconds of all jobs over the fleet's GPUs) and
``unconstrained_end_s`` (the last end with no waiting at all; a makespan cannot be shorter);
``target``: whether crdkit has more free leaves than best fit, and at least its share of
multi-pod jobs in one leaf. One JSON object on stdout; a line per contestant on stderr.
"""

from __future__ import annotations

import argparse
import csv
import heapq
import json
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from crdkit.placer import Cluster, Placement
from crdkit.placer.cluster import Policy

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _job_stream import LEAF, percentile

DATA = Path(__file__).parent / "data"
NODES_CSV = DATA / "openb_node_list_gpu_node.csv"
PODS_CSV = DATA / "openb_pod_list_default.csv"
SPINE = "topology.crdkit.io/spine"
LEVELS = [SPINE, LEAF]
GPU = "nvidia.com/gpu"
NODE_GPUS = 8
NODES_PER_LEAF = 8
LEAVES_PER_SPINE = 16
ORIGIN_S = 10_000_000.0
"""Creation time the replay starts at; pods created earlier arrive at once."""
GANG_SIZES = (1, 2, 4, 8)
GANG_WEIGHTS = (40, 30, 20, 10)
REQUIRED_FROM = 4
"""Gangs of this many pods or more require one leaf; smaller multi-pod ones prefer it."""
DEFAULT_TIME_SCALE = 10_000.0
CONTESTANTS: dict[str, Policy | None] = {
    "crdkit": "keep-whole",
    "best-fit": "best-fit",
    "first-fit": None,
}
"""Each contestant's placer policy; None: the first-fit baseline of this module."""


@dataclass(frozen=True)
class Node:
    name: str
    leaf: int
    spine: int
    gpu: int
    cpu: int
    """Milli-CPUs."""
    memory: int
    """MiB."""


@dataclass(frozen=True)
class Job:
    name: str
    pods: int
    gpus: int
    """GPUs per pod."""
    tasks: tuple[tuple[int, int, int], ...]
    """The pods by request: (milli-CPUs, MiB, pods), most CPU first; the pods add up to ``pods``."""
    arrival: float
    seconds: float

    @property
    def mode(self) -> str:
        if self.pods >= REQUIRED_FROM:
            return "required"
        return "preferred" if self.pods > 1 else "unconstrained"

    @property
    def strictness(self) -> int:
        """1 when the job must lie in one leaf, 0 when it may go anywhere."""
        return int(self.mode == "required")

    @property
    def shape(self) -> tuple[Any, ...]:
        """What decides where the job fits: alike jobs fit alike."""
        return (self.strictness, self.pods, self.gpus, self.tasks)


def fleet(path: Path = NODES_CSV) -> list[Node]:
    """The trace's 8-GPU nodes by name, with synthetic leaves and spines."""
    with path.open(newline="") as handle:
        rows = sorted(
            (row for row in csv.DictReader(handle) if int(row["gpu"]) == NODE_GPUS),
            key=lambda row: row["sn"],
        )
    return [
        Node(
            name=row["sn"],
            leaf=index // NODES_PER_LEAF,
            spine=index // (NODES_PER_LEAF * LEAVES_PER_SPINE),
            gpu=int(row["gpu"]),
            cpu=int(row["cpu_milli"]),
            memory=int(row["memory_mib"]),
        )
        for index, row in enumerate(rows)
    ]


def trace_jobs(
    time_scale: float, seed: int, path: Path = PODS_CSV
) -> tuple[list[Job], dict[str, int]]:
    """Every job of the trace in arrival order, and the counts of the rows left out."""
    rng = random.Random(seed)
    singles: list[Job] = []
    whole: list[tuple[dict[str, str], float]] = []  # the 8-GPU rows and their durations
    dropped = {"no_gpu": 0, "non_positive_duration": 0}
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows.sort(key=lambda row: (float(row["creation_time"]), row["name"]))
    for row in rows:
        gpus = int(row["num_gpu"])
        if gpus == 0:
            dropped["no_gpu"] += 1
            continue
        start = row["scheduled_time"] or row["creation_time"]
        seconds = float(row["deletion_time"]) - float(start)
        if seconds <= 0:
            dropped["non_positive_duration"] += 1
            continue
        if gpus >= NODE_GPUS:
            whole.append((row, seconds))
            continue
        singles.append(_job(row["name"], [row], 1, gpus, seconds, time_scale))
    gangs: list[Job] = []
    at = 0
    while at < len(whole):
        fitting = [s for s in GANG_SIZES if s <= len(whole) - at]
        size = rng.choices(fitting, GANG_WEIGHTS[: len(fitting)])[0]
        members = whole[at : at + size]
        seconds = sum(s for _, s in members) / size
        name = f"gang-{members[0][0]['name']}"
        gangs.append(_job(name, [r for r, _ in members], size, NODE_GPUS, seconds, time_scale))
        at += size
    jobs = sorted([*singles, *gangs], key=lambda job: (job.arrival, job.name))
    return jobs, dropped


def _job(
    name: str, rows: list[dict[str, str]], pods: int, gpus: int, seconds: float, scale: float
) -> Job:
    counts: dict[tuple[int, int], int] = {}
    for row in rows:
        request = (int(row["cpu_milli"]), int(row["memory_mib"]))
        counts[request] = counts.get(request, 0) + 1
    created = float(rows[0]["creation_time"])
    return Job(
        name=name,
        pods=pods,
        gpus=gpus,
        tasks=tuple((cpu, memory, n) for (cpu, memory), n in sorted(counts.items(), reverse=True)),
        arrival=max(created - ORIGIN_S, 0.0) / scale,
        seconds=seconds,
    )


Picks = list[tuple[int, int]]
"""Where a job's pods went: (node index, pods) pairs."""


class Contestant(Protocol):
    def place(self, job: Job) -> tuple[Any, Picks] | None:
        """A placement of every pod of ``job`` (a handle and the picks), or None; unchanged."""
        ...

    def assume(self, job: Job, handle: Any) -> None: ...

    def release(self, job: Job, handle: Any) -> None: ...


class PlacerContestant:
    """`crdkit.placer.Cluster` under one policy; one compiled gang per job shape."""

    def __init__(self, nodes: Sequence[Node], policy: Policy) -> None:
        self.policy: Policy = policy
        self.index = {node.name: i for i, node in enumerate(nodes)}
        self.cluster = Cluster(LEVELS, [_node_spec(node) for node in nodes])
        self.compiled: dict[tuple[Any, ...], Any] = {}

    def _gang(self, job: Job) -> Any:
        compiled = self.compiled.get(job.shape)
        if compiled is None:
            gang: dict[str, Any] = {
                "name": job.name,
                "tasks": [
                    {
                        "name": f"pods-{k}",
                        "replicas": count,
                        "requests": {GPU: job.gpus, "cpu": f"{cpu}m", "memory": f"{memory}Mi"},
                    }
                    for k, (cpu, memory, count) in enumerate(job.tasks)
                ],
            }
            if job.pods > 1:
                gang["topology"] = {"mode": job.mode, "level": LEAF}
            compiled = self.compiled[job.shape] = self.cluster.compile(gang)
        return compiled

    def place(self, job: Job) -> tuple[Placement, Picks] | None:
        placement = self.cluster.place(self._gang(job), self.policy)
        if placement.status != "placed":
            return None
        return placement, [(self.index[a.node], a.count) for a in placement.assignments]

    def assume(self, job: Job, handle: Placement) -> None:
        self.cluster.assume(handle)

    def release(self, job: Job, handle: Placement) -> None:
        self.cluster.release(handle)


class FirstFit:
    """The baseline: first node in name order with room; leaves in name order when required."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self.free = [[node.gpu, node.cpu, node.memory] for node in nodes]
        self.leaves: list[range] = []
        for index, node in enumerate(nodes):
            if node.leaf == len(self.leaves):
                self.leaves.append(range(index, index + 1))
            else:
                self.leaves[-1] = range(self.leaves[-1].start, index + 1)

    def _fill(self, job: Job, nodes: range) -> dict[int, list[int]] | None:
        """Each pod, most CPU first, on the first node of ``nodes`` with room left."""
        taken: dict[int, list[int]] = {}  # node index: what this job's pods take of it
        for cpu, memory, count in job.tasks:
            left = count
            for index in nodes:
                gpu_free, cpu_free, memory_free = self.free[index]
                mine = taken.get(index, [0, 0, 0])
                fits = (gpu_free - mine[0]) // job.gpus
                if cpu:
                    fits = min(fits, (cpu_free - mine[1]) // cpu)
                if memory:
                    fits = min(fits, (memory_free - mine[2]) // memory)
                if fits <= 0:
                    continue
                pods = min(left, fits)
                taken[index] = [
                    mine[0] + pods * job.gpus,
                    mine[1] + pods * cpu,
                    mine[2] + pods * memory,
                ]
                left -= pods
                if not left:
                    break
            if left:
                return None
        return taken

    def place(self, job: Job) -> tuple[dict[int, list[int]], Picks] | None:
        domains = self.leaves if job.mode == "required" else [range(len(self.free))]
        for nodes in domains:
            taken = self._fill(job, nodes)
            if taken is not None:
                return taken, sorted((i, use[0] // job.gpus) for i, use in taken.items())
        return None

    def assume(self, job: Job, handle: dict[int, list[int]]) -> None:
        self._change(handle, -1)

    def release(self, job: Job, handle: dict[int, list[int]]) -> None:
        self._change(handle, 1)

    def _change(self, taken: dict[int, list[int]], sign: int) -> None:
        for index, use in taken.items():
            free = self.free[index]
            for k in range(3):
                free[k] += sign * use[k]


def _node_spec(node: Node) -> dict[str, Any]:
    return {
        "name": node.name,
        "labels": {SPINE: f"spine-{node.spine}", LEAF: f"leaf-{node.leaf:03d}"},
        "allocatable": {GPU: node.gpu, "cpu": f"{node.cpu}m", "memory": f"{node.memory}Mi"},
    }


def make_contestant(name: str, nodes: Sequence[Node]) -> Contestant:
    policy = CONTESTANTS[name]
    return FirstFit(nodes) if policy is None else PlacerContestant(nodes, policy)


def feasible(jobs: list[Job], nodes: Sequence[Node]) -> tuple[list[Job], int]:
    """The jobs that every contestant places on the empty cluster, and how many others."""
    empty = [make_contestant(name, nodes) for name in CONTESTANTS]
    fits: dict[tuple[Any, ...], bool] = {}
    kept = []
    for job in jobs:
        if job.shape not in fits:
            fits[job.shape] = all(c.place(job) is not None for c in empty)
        if fits[job.shape]:
            kept.append(job)
    return kept, len(jobs) - len(kept)


def _dominated(job: Job, failed: list[tuple[Any, ...]]) -> bool:
    """Whether ``job`` asks at least what a job that did not fit asked: as many pods, as
    strict a constraint, at least the GPUs, CPU and memory per pod (one request for all pods)."""
    if len(job.tasks) > 1:
        return job.shape in failed
    ((cpu, memory, _),) = job.tasks
    mine = (job.strictness, job.pods, job.gpus, cpu, memory)
    for shape in failed:
        if len(shape[3]) > 1:
            continue
        theirs = (shape[0], shape[1], shape[2], shape[3][0][0], shape[3][0][1])
        if all(m >= t for m, t in zip(mine, theirs, strict=True)):
            return True
    return False


def replay(jobs: Sequence[Job], nodes: Sequence[Node], contestant: Contestant) -> dict[str, Any]:
    """One contestant on the stream; the figures of the module docstring."""
    clock = time.perf_counter()
    leaf_of = [node.leaf for node in nodes]
    leaves = max(leaf_of) + 1
    total_gpus = sum(node.gpu for node in nodes)
    first = min(job.arrival for job in jobs)
    window_end = max(job.arrival for job in jobs)
    pods_on = [0] * len(nodes)
    busy_in_leaf = [0] * leaves
    free_leaves, free_gpus = leaves, total_gpus
    heap: list[tuple[float, int, int]] = [(job.arrival, 1, i) for i, job in enumerate(jobs)]
    heapq.heapify(heap)  # (time, 0 = end / 1 = arrival, job index): ends first at an instant
    queue: list[int] = []
    held: dict[int, tuple[Any, Picks]] = {}
    picks_of: dict[int, Picks] = {}
    started: dict[int, float] = {}
    ended: list[float] = []
    area = {"free": 0.0, "queue": 0.0, "used": 0.0, "waiting": 0.0}
    wait_area = {"time": 0.0, "used": 0.0, "free": 0.0}
    queue_max = calls = 0
    at = first
    while heap:
        now = heap[0][0]
        span = now - at
        inside = max(0.0, min(now, window_end) - at)
        used = total_gpus - free_gpus
        area["free"] += free_leaves * inside
        area["queue"] += len(queue) * inside
        area["used"] += used * inside
        if queue:
            area["waiting"] += inside
            wait_area["time"] += span
            wait_area["used"] += used * span
            wait_area["free"] += free_leaves * span
        at = now
        released, arrived = False, []
        while heap and heap[0][0] == now:
            _, kind, index = heapq.heappop(heap)
            if kind == 1:
                queue.append(index)
                arrived.append(index)
                continue
            job = jobs[index]
            handle, picks = held.pop(index)
            contestant.release(job, handle)
            ended.append(now)
            released = True
            free_gpus += job.pods * job.gpus
            for node, count in picks:
                pods_on[node] -= count
                if not pods_on[node]:
                    busy_in_leaf[leaf_of[node]] -= 1
                    free_leaves += not busy_in_leaf[leaf_of[node]]
        failed: list[tuple[Any, ...]] = []
        placed: set[int] = set()
        for index in queue if released else arrived:
            job = jobs[index]
            if job.pods * job.gpus > free_gpus or _dominated(job, failed):
                continue
            calls += 1
            result = contestant.place(job)
            if result is None:
                failed.append(job.shape)
                continue
            handle, picks = result
            contestant.assume(job, handle)
            held[index] = result
            picks_of[index] = picks
            placed.add(index)
            started[index] = now
            free_gpus -= job.pods * job.gpus
            for node, count in picks:
                if not pods_on[node]:
                    free_leaves -= not busy_in_leaf[leaf_of[node]]
                    busy_in_leaf[leaf_of[node]] += 1
                pods_on[node] += count
            heapq.heappush(heap, (now + job.seconds, 0, index))
        if placed:
            queue = [index for index in queue if index not in placed]
        queue_max = max(queue_max, len(queue))
    if queue or held:
        raise SystemExit(f"stuck: {len(queue)} jobs never started")
    window = max(window_end - first, 1e-9)
    waits = [started[i] - job.arrival for i, job in enumerate(jobs)]
    by_size = {}
    for size in GANG_SIZES:
        sized = [waits[i] for i, job in enumerate(jobs) if job.pods == size]
        by_size[str(size)] = {
            "jobs": len(sized),
            "p50_s": round(percentile(sized, 0.5), 1),
            "p99_s": round(percentile(sized, 0.99), 1),
            "max_s": round(max(sized, default=0.0), 1),
        }
    multi = [i for i, job in enumerate(jobs) if job.pods > 1]
    in_one = {i for i in multi if len({leaf_of[node] for node, _ in picks_of[i]}) == 1}
    required = [i for i in multi if jobs[i].mode == "required"]
    waiting = max(wait_area["time"], 1e-9)
    return {
        "makespan_s": round(max(ended) - first, 1),
        "last_start_s": round(max(started.values()) - first, 1),
        "wait_p50_s": round(percentile(waits, 0.5), 1),
        "wait_p99_s": round(percentile(waits, 0.99), 1),
        "wait_max_s": round(max(waits), 1),
        "wait_by_size": by_size,
        "free_leaves_mean": round(area["free"] / window, 2),
        "free_leaves_mean_while_waiting": round(wait_area["free"] / waiting, 2),
        "multi_pod_jobs": len(multi),
        "multi_pod_in_one_leaf": len(in_one),
        "multi_pod_in_one_leaf_pct": round(100 * len(in_one) / max(len(multi), 1), 1),
        "leaf_required_jobs": len(required),
        "leaf_required_in_one_leaf": sum(i in in_one for i in required),
        "gpu_util_pct": round(100 * area["used"] / window / total_gpus, 1),
        "gpu_util_while_waiting_pct": round(100 * wait_area["used"] / waiting / total_gpus, 1),
        "queue_mean": round(area["queue"] / window, 1),
        "queue_max": queue_max,
        "waiting_time_pct": round(100 * area["waiting"] / window, 1),
        "jobs_placed": len(started),
        "place_calls": calls,
        "run_s": round(time.perf_counter() - clock, 1),
    }


def run(argv: list[str] | None = None) -> dict[str, Any]:
    """The bench's JSON object for the command line ``argv``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--time-scale",
        type=float,
        default=DEFAULT_TIME_SCALE,
        help="divide arrival times by this (durations unchanged)",
    )
    parser.add_argument("--jobs", type=int, default=0, help="replay this many jobs (0: all)")
    parser.add_argument("--skip", type=int, default=0, help="leave out the first K jobs")
    parser.add_argument("--seed", type=int, default=7, help="seed of the gang sizes")
    parser.add_argument(
        "--leaves", type=int, default=0, help="replay on the first L leaves only (0: all)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object (the default)")
    args = parser.parse_args(argv)
    if args.time_scale <= 0:
        parser.error("--time-scale: a positive number")
    if args.jobs < 0 or args.skip < 0 or args.leaves < 0:
        parser.error("--jobs, --skip, --leaves: counts >= 0")
    nodes = fleet()
    if args.leaves:
        nodes = [node for node in nodes if node.leaf < args.leaves]
    jobs, dropped = trace_jobs(args.time_scale, args.seed)
    jobs = jobs[args.skip :]
    if args.jobs:
        jobs = jobs[: args.jobs]
    jobs, dropped["fit_no_empty_cluster"] = feasible(jobs, nodes)
    if not jobs:
        parser.error("no jobs to replay")
    total_gpus = sum(node.gpu for node in nodes)
    first = min(job.arrival for job in jobs)
    work = sum(job.pods * job.gpus * job.seconds for job in jobs)
    results = {}
    for name in CONTESTANTS:
        results[name] = replay(jobs, nodes, make_contestant(name, nodes))
        print(json.dumps({"contestant": name, **results[name]}), file=sys.stderr)
    crdkit, best = results["crdkit"], results["best-fit"]
    return {
        "nodes": len(nodes),
        "gpus": total_gpus,
        "leaves": max(node.leaf for node in nodes) + 1,
        "spines": max(node.spine for node in nodes) + 1,
        "nodes_per_leaf": NODES_PER_LEAF,
        "leaves_per_spine": LEAVES_PER_SPINE,
        "time_scale": args.time_scale,
        "seed": args.seed,
        "skip": args.skip,
        "jobs": len(jobs),
        "pods": sum(job.pods for job in jobs),
        "jobs_by_size": {str(size): sum(job.pods == size for job in jobs) for size in GANG_SIZES},
        "dropped": dropped,
        "arrival_window_s": round(max(job.arrival for job in jobs) - first, 1),
        "lower_bound_s": round(work / total_gpus, 1),
        "unconstrained_end_s": round(max(job.arrival + job.seconds for job in jobs) - first, 1),
        "contestants": results,
        "target": {
            "more_free_leaves_than_best_fit": crdkit["free_leaves_mean"] > best["free_leaves_mean"],
            "in_one_leaf_not_lower": crdkit["multi_pod_in_one_leaf_pct"]
            >= best["multi_pod_in_one_leaf_pct"],
        },
        "loadavg": list(os.getloadavg()),
    }


def main(argv: list[str] | None = None) -> None:
    print(json.dumps(run(argv)))


if __name__ == "__main__":
    main()
