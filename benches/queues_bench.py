"""Three teams sharing one GPU cluster through crdkit's queues, on the fake cluster and a virtual
clock; the same stream without queues beside it; with ``--live``, crdkit and Kueue live too.

    python benches/queues_bench.py --nodes 256 --seeds 7,8,9 --json
    python benches/queues_bench.py --nodes 256 --seeds 7,8,9 --load 2 --live --workdir DIR

The cluster, the teams, their quotas and their jobs are `_queue_stream`'s: ``--nodes`` 8-GPU
nodes in leaves of 16, three queues ``team-a``, ``team-b`` (weight 1) and ``team-c`` (weight 2)
in the cohort ``org``, a quarter of the GPUs guaranteed to each and the last quarter the
cohort's; team-a and team-b submit their jobs at once, team-c ``RECLAIM_AT_S`` seconds later,
when the others have borrowed everything. Jobs of 8 pods or more require one leaf. A job whose
pods are evicted (a reclaim) is submitted again at once, whole, as a new attempt: the work is
still to be done, and the GPU-time the evicted attempt held is counted as held, not as useful.

Variants, per seed:

- ``queues``: crdkit's scheduler with the queues (`queues`), in this process, on the fake
  cluster and a virtual clock (no pass pause);
- ``no-queues``: the same scheduler and stream with no queue, first come first served;
- with ``--live``, then ``crdkit-live``: ``crdkit scheduler --queues --install-crds
  --levels topology.crdkit.io/leaf`` in a process of its own, started as
  benches/scheduler_compare.py starts its crdkit contestant (the same command, policy and
  defaults, pass pause included: `scheduler_compare.contestant_running`), on a fresh local
  control plane with the same simulated nodes; the Queues of `queues` are created once it is
  ready, and each job is a coscheduling PodGroup and its pods, labelled with the team's queue
  (`job_objects`); an evicted attempt (crdkit deletes every pod of a victim gang) is
  submitted again at once as a new PodGroup, the old one deleted;
- and ``kueue-live``: Kueue v0.17 with kube-scheduler on the same plane and stream
  (`queues_kueue.run_kueue`; see benches/queues_kueue.py).

The two live runs share everything but the contestant (`_queues_live`: the control plane, the
nodes, the simulated kubelets, the submission, job ends after their run time from all pods
bound, eviction bookkeeping, one ``time.monotonic()`` clock) and run one after the other. Their
pods have a grace period of 0 (``victim_grace_s``), as Kueue's always had. ``--timeout`` bounds
each live run (seconds), ``--workdir`` keeps their logs (``DIR/seed<N>/crdkit`` and
``.../kueue``).

Figures per variant and seed (`_queue_stream.stream_figures`, the same for every variant):

- ``share_pct``: each team's share of the GPU-time held by whole jobs (evicted attempts
  included) in the saturated window (from team-c's submit to the first time a team has no job
  left to start), against ``fair_share_pct`` (`_queue_stream.fair_shares`);
  ``share_gap_max_pts`` is the largest gap;
- ``reclaim_s``: for team-c's jobs that arrived under its nominal quota, submit to all bound
  (p50, max, count), and ``victim_grace_s``, the victims' grace period (0 on the fake cluster,
  whose simulated kubelet ends a deleted pod at once, and 0 live);
- ``useful_gpu_pct``: GPUs held by whole jobs that then ran to their end, as a share of the
  cluster, over the saturated window; ``held_gpu_pct`` the same counting evicted attempts;
- ``evicted_jobs``: attempts evicted;
- ``admitted_not_placeable``: simulated, at the end of every pass, the gangs whose queue
  counted them while some of their pods were not bound (the most seen in one pass); live, what
  the apiserver shows: for crdkit (which admits a gang by binding it, with no gates) the
  attempts with some but not all pods bound for more than `_queues_live.STUCK_S` seconds
  (`_queues_live.partly_bound`), for Kueue the attempts it ungated that were then not all
  bound within that time or were reported unschedulable (`queues_kueue.not_placeable`);
- ``makespan_s``: the start to the last job's end (None if a live run timed out);
- live only: ``reclaim_nominal_s``, from team-c's submit to the first moment its whole
  gangs hold its nominal quota (`_queues_live.nominal_reached_s`: reclaim whatever order a
  contestant admits team-c's own gangs in, where ``reclaim_s`` follows its first gangs by
  submit order, which crdkit's size credit lets its bigger gangs pass), ``jobs_done``,
  ``eviction_reasons`` (the reason of the condition the contestant
  wrote on the pod before deleting it: ``PreemptionByScheduler`` for crdkit,
  ``WorkloadEvictedDueToPreempted`` for Kueue; ``deleted`` if none), ``errors`` and
  ``log_warnings``.

With ``--live`` the JSON also has ``table`` (those figures, one row per contestant and seed)
and ``targets`` (`targets`, for crdkit's ``queues`` and ``crdkit-live`` runs), what crdkit's
queues are meant to reach:

- every queue's share within 5 points of its fair share;
- every reclaim within the victims' grace period plus 2 s;
- useful GPUs at least 95 % of the seed's ``no-queues`` run, and at least Kueue's;
- no gang admitted but not placeable.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
from collections.abc import Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import crdkit
from crdkit.client import KubernetesError, NotFound
from crdkit.resources import Event, Pod
from crdkit.resources.queues import Queue
from crdkit.scheduling.gangs import KUEUE_PREFERRED, KUEUE_REQUIRED
from crdkit.scheduling.groups import GROUP_APIS
from crdkit.scheduling.groups.coscheduling import COSCHEDULING_POD_GROUP_LABEL, CoschedulingPodGroup
from crdkit.scheduling.queues.gate import QUEUE_LABEL
from crdkit.testing import ControlPlane, FakeCluster, FakeKind, SimulatedKubelet
from crdkit.testing.sim.virtual_time import run_on_virtual_clock

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _job_stream import LEAF, NAMESPACE
from _queue_stream import (
    COHORT,
    TEAMS,
    Span,
    TeamJob,
    nominal_gpus,
    queue_stream,
    stream_figures,
)
from _queues_live import Attempt, LiveRun, LiveStream, live_figures, partly_bound, until
from queue_sim_bench import SCHEDULER, VIRTUAL_EPOCH, add_leaf_nodes, simulated_scheduler
from queues_kueue import run_kueue
from scheduler_compare import CRDKIT, LogSummary, contestant_running

VARIANTS = ("queues", "no-queues")
LIVE_POLICY = "best-fit"
"""crdkit's placer policy live: benches/scheduler_compare.py's default for its crdkit."""
LIVE_GRACE_S = 0
"""The live pods' grace period, as Kueue's pods have it: a reclaim's victims go at once."""
SHARE_TARGET_PTS = 5.0
RECLAIM_SLACK_S = 2.0
USEFUL_TARGET = 0.95
"""The targets (see the module docstring): every share within `SHARE_TARGET_PTS` points of
fair, every reclaim within the victims' grace period plus `RECLAIM_SLACK_S`, useful GPUs at
least `USEFUL_TARGET` of the run without queues."""


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


def job_objects(
    job: TeamJob, attempt: int, with_queue: bool, *, scheduler: str = SCHEDULER, live: bool = False
) -> list[Any]:
    """Attempt ``attempt`` of ``job``: its coscheduling PodGroup of all its pods, then the pods
    (with ``with_queue``, labelled with the team's queue), for the scheduler named
    ``scheduler``; a leaf required from 8 pods up and preferred below. With ``live``, each pod
    also has what a real apiserver demands and what Kueue's pods have in
    benches/queues_kueue.py (an image; limits equal to the requests, which an extended resource
    must have; ``restartPolicy: Never``) and a grace period of `LIVE_GRACE_S`, as Kueue's."""
    name = job.name if attempt == 0 else f"{job.name}-r{attempt}"
    group = CoschedulingPodGroup.model_validate(
        {"metadata": {"name": name, "namespace": NAMESPACE}, "spec": {"minMember": job.pods}}
    )
    topology = KUEUE_REQUIRED if job.pods >= 8 else KUEUE_PREFERRED
    labels = {COSCHEDULING_POD_GROUP_LABEL: name}
    if with_queue:
        labels[QUEUE_LABEL] = job.team
    gpus = {"nvidia.com/gpu": str(job.gpus)}
    container: dict[str, Any] = {"name": "c", "resources": {"requests": gpus}}
    spec: dict[str, Any] = {"schedulerName": scheduler, "containers": [container]}
    if live:
        container |= {"image": "trainer", "resources": {"requests": gpus, "limits": gpus}}
        spec |= {"restartPolicy": "Never", "terminationGracePeriodSeconds": LIVE_GRACE_S}
    pods = [
        Pod.model_validate(
            {
                "metadata": {
                    "name": f"{name}-{index}",
                    "namespace": NAMESPACE,
                    "labels": labels,
                    "annotations": {topology: LEAF},
                },
                "spec": spec,
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
        await add_leaf_nodes(client, nodes)
        if with_queues:
            for made in queues(nodes):
                await client.create(made)
        manager, scheduler = simulated_scheduler(client, wall_clock, queues=with_queues)
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
    return stream_figures(
        nodes,
        jobs,
        held,
        useful,
        start,
        evicted=evicted,
        admitted_not_placeable=worst_unplaced,
        victim_grace_s=0.0,
    )


# -- live -------------------------------------------------------------------------------------


class CrdkitStream(LiveStream):
    """crdkit's part of a live run (`_queues_live.LiveStream`): ``crdkit scheduler --queues
    --install-crds`` as a process of its own, run as benches/scheduler_compare.py runs its
    crdkit contestant (`scheduler_compare.contestant_running`: the same command, policy and
    defaults, pass pause included), the Queues of `queues`, and each attempt of a job as its
    coscheduling PodGroup and pods (`job_objects`)."""

    def __init__(self, run: LiveRun, workdir: Path, timeout_s: float) -> None:
        super().__init__(run, workdir, timeout_s)
        self.summaries = {"crdkit": LogSummary()}

    def running(self, plane: ControlPlane) -> AbstractAsyncContextManager[None]:
        return contestant_running(
            "crdkit",
            plane,
            self.client,
            LIVE_POLICY,
            ["--queues", "--install-crds"],
            self.summaries["crdkit"],
            log_dir=self.workdir,
        )

    async def ready(self) -> None:
        # The scheduler installed the Queue CRD before it answered /readyz.
        for made in queues(self.live_run.nodes):
            await self.client.create(made)

        async def admitting() -> bool:
            for team in TEAMS:
                got = await self.client.get(Queue, team.name)
                conditions = got.status.conditions if got.status else []
                if not any(c.type == "Ready" and c.status == "True" for c in conditions or []):
                    return False
            return True

        await until(admitting, 120, "the teams' Queues Ready")

    def objects(self, job: TeamJob, attempt: int, indices: list[int]) -> list[Any]:
        # crdkit evicts a gang whole, so an attempt is always all of the job's pods.
        assert indices == list(range(job.pods)), indices
        return job_objects(job, attempt, True, scheduler=CRDKIT, live=True)

    async def replace(self, job: TeamJob, attempt: Attempt) -> None:
        # As queues_bench's simulated runs do: the job again at once, as a new gang; the
        # evicted attempt's PodGroup goes, as its job controller would delete it.
        number = self.live_run.attempts[job.name].index(attempt)
        await super().replace(job, attempt)
        old = job.name if number == 0 else f"{job.name}-r{number}"
        with contextlib.suppress(NotFound):
            await self.client.delete(CoschedulingPodGroup, old, namespace=NAMESPACE)

    def not_placeable(self, end: float) -> int:
        return partly_bound(self.attempts(), end)

    async def after(self) -> None:
        """The scheduler's Events by reason, and for the evicted attempts whose pod bore no
        ``DisruptionTarget`` condition (reason ``deleted``) the Events of their pods: what
        tells a preemption from a gang rolled back or another delete."""
        events = (await self.client.list(Event, namespace=NAMESPACE)).items
        by_reason: dict[str, int] = {}
        on_pod: dict[str, list[str]] = {}
        for event in events:
            reason = event.reason or ""
            count = event.series.count if event.series else event.deprecated_count or 1
            by_reason[reason] = by_reason.get(reason, 0) + count
            name = event.regarding.name if event.regarding else None
            on_pod.setdefault(name or "", []).append(f"{reason}: {event.note}"[:300])
        unexplained = [
            {"pod": attempt.pods[0], "events": on_pod.get(attempt.pods[0], [])}
            for attempt in self.attempts()
            if attempt.evicted_why == "deleted"
        ]
        self.live_run.notes = {"events_by_reason": by_reason, "deleted_unmarked": unexplained}


async def run_crdkit_live(
    nodes: int,
    seed: int,
    load: float,
    *,
    workdir: Path,
    timeout_s: float,
    time_scale: float = 1.0,
) -> LiveRun:
    """``crdkit scheduler --queues``'s live run of the seed's stream, beside Kueue's
    (`queues_kueue.run_kueue`: the same control plane, nodes, kubelets, submission and clock,
    `_queues_live`), its log in ``workdir``. Never raises for the scheduler's sake: a run that
    fails or does not finish within ``timeout_s`` seconds of its start is reported in
    ``errors`` with whatever was measured. ``time_scale`` multiplies every job's run time (for
    quick tests)."""
    jobs = queue_stream(nodes, load, seed)
    for job in jobs:
        job.seconds *= time_scale
    run = LiveRun("crdkit", nodes, seed, load, True, jobs, victim_grace_s=float(LIVE_GRACE_S))
    run.versions["crdkit"] = {"version": crdkit.__version__, "policy": LIVE_POLICY}
    await asyncio.to_thread(workdir.mkdir, parents=True, exist_ok=True)
    try:
        await CrdkitStream(run, workdir, timeout_s).run()
    except (TimeoutError, OSError, RuntimeError, KubernetesError) as error:
        run.errors.append(f"{type(error).__name__}: {error}")
    except SystemExit as error:  # scheduler_compare.wait_ready: the scheduler never got ready
        run.errors.append(str(error))
    return run


def targets(
    row: dict[str, Any], no_queues: dict[str, Any] | None, kueue: dict[str, Any] | None
) -> dict[str, bool | None]:
    """Whether one run of crdkit's queues (``row``: the figures of `stream_figures`) meets the
    bench's targets (see the module docstring) beside the seed's run without queues and Kueue's
    live run (None where that run or its figures are missing)."""

    def useful(other: dict[str, Any] | None) -> float | None:
        return other.get("useful_gpu_pct") if other else None

    if "share_pct" not in row:
        return {}
    no_queue_useful, kueue_useful = useful(no_queues), useful(kueue)
    reclaim_limit = row["victim_grace_s"] + RECLAIM_SLACK_S
    return {
        "share_within_5_pts": row["share_gap_max_pts"] <= SHARE_TARGET_PTS,
        "reclaim_within_grace_plus_2_s": row["reclaim_s"]["max"] <= reclaim_limit,
        "useful_ge_95pct_of_no_queues": (
            None
            if no_queue_useful is None
            else row["useful_gpu_pct"] >= USEFUL_TARGET * no_queue_useful
        ),
        "useful_ge_kueue": None if kueue_useful is None else row["useful_gpu_pct"] >= kueue_useful,
        "zero_admitted_not_placeable": row["admitted_not_placeable"] == 0,
    }


TABLE_KEYS = (
    "share_pct",
    "fair_share_pct",
    "share_gap_max_pts",
    "reclaim_s",
    "reclaim_nominal_s",
    "victim_grace_s",
    "useful_gpu_pct",
    "held_gpu_pct",
    "evicted_jobs",
    "admitted_not_placeable",
    "makespan_s",
)


def table_row(seed: int, contestant: str, figures: dict[str, Any]) -> dict[str, Any]:
    """One contestant's figures for one seed, as the table of ``--live`` shows them."""
    return {"seed": seed, "contestant": contestant, **{k: figures.get(k) for k in TABLE_KEYS}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=256)
    parser.add_argument("--seeds", default="7,8,9")
    parser.add_argument(
        "--load", type=float, default=3.0, help="each team's jobs, in cluster-fulls of GPUs"
    )
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--live",
        action="store_true",
        help="per seed, also crdkit scheduler and Kueue live on a local control plane",
    )
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per live run")
    parser.add_argument(
        "--workdir", type=Path, default=None, help="where each live run's logs go (default: /tmp)"
    )
    args = parser.parse_args(argv)
    if args.live and (args.nodes < 16 or args.nodes % 16):
        parser.error("--nodes: a positive multiple of 16 (whole leaves) with --live")
    out: dict[str, Any] = {"nodes": args.nodes, "load": args.load, "runs": []}
    base = args.workdir or Path(os.environ.get("TMPDIR", "/tmp")) / f"queues-bench-{os.getpid()}"
    for seed in [int(s) for s in args.seeds.split(",")]:
        for variant in args.variants.split(","):
            jobs = queue_stream(args.nodes, args.load, seed)
            figures = run_on_virtual_clock(run(args.nodes, jobs, variant))
            out["runs"].append({"seed": seed, "variant": variant, **figures})
            if not args.json:
                print(seed, variant, figures, file=sys.stderr)
        if args.live:
            live_runs(out, args.nodes, seed, args.load, base / f"seed{seed}", args.timeout)
    for variant in args.variants.split(","):
        runs = [r for r in out["runs"] if r["variant"] == variant]
        out[f"{variant}_useful_gpu_pct_mean"] = round(
            statistics.mean(r["useful_gpu_pct"] for r in runs), 1
        )
    if args.live:
        out["logs"] = str(base)
        out["cpus"] = os.cpu_count()
    print(json.dumps(out, indent=2 if not args.json else None))
    return 0


def live_runs(
    out: dict[str, Any], nodes: int, seed: int, load: float, workdir: Path, timeout_s: float
) -> None:
    """crdkit's and Kueue's live runs of ``seed``'s stream, one after the other (one control
    plane at a time), added to ``out``: each under ``runs``, a row each in ``table``, and the
    targets of crdkit's simulated and live runs under ``targets``."""
    simulated = {r["variant"]: r for r in out["runs"] if r["seed"] == seed}
    for variant, figures in simulated.items():
        out.setdefault("table", []).append(table_row(seed, variant, figures))
    contestants: dict[str, Callable[[], Coroutine[Any, Any, LiveRun]]] = {
        "crdkit-live": lambda: run_crdkit_live(
            nodes, seed, load, workdir=workdir / "crdkit", timeout_s=timeout_s
        ),
        "kueue-live": lambda: run_kueue(
            nodes, seed, load, workdir=workdir / "kueue", timeout_s=timeout_s
        ),
    }
    figures_of: dict[str, dict[str, Any]] = {}
    for variant, start in contestants.items():
        live = asyncio.run(start())
        figures_of[variant] = live_figures(live)
        out["runs"].append({**figures_of[variant], "variant": variant})
        out.setdefault("table", []).append(table_row(seed, variant, figures_of[variant]))
        print(json.dumps(out["table"][-1]), file=sys.stderr, flush=True)
        if live.errors:
            print(f"{variant} seed {seed} errors: {live.errors}", file=sys.stderr, flush=True)
    no_queues, kueue = simulated.get("no-queues"), figures_of["kueue-live"]
    for variant, figures in (("queues", simulated.get("queues")), ("crdkit-live", None)):
        row = figures if figures is not None else figures_of[variant]
        out.setdefault("targets", []).append(
            {"seed": seed, "contestant": variant, **targets(row, no_queues, kueue)}
        )


if __name__ == "__main__":
    sys.exit(main())
