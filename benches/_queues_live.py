"""The live runs of the queues bench's stream (`_queue_stream`), whoever admits the jobs: one
module, so that Kueue (benches/queues_kueue.py) and ``crdkit scheduler --queues``
(benches/queues_bench.py ``--live``) get the very same cluster, kubelets, submission, job ends,
eviction bookkeeping and clock, and differ only where the contestants do.

What every live run shares (`LiveStream.run`): a fresh local control plane (kube-apiserver and
etcd from `tools/envtest`) with ``nodes`` simulated 8-GPU nodes in leaves of 16
(`crdkit.testing.create_gpu_cluster`, the leaf label `_job_stream.LEAF`), their kubelets
played by `crdkit.testing.SimulatedKubelet`; an informer on the jobs' pods that records, on
``time.monotonic()``, when each attempt's pods were ungated and bound; team-a's and team-b's
jobs submitted at the start and team-c's `RECLAIM_AT_S` seconds later (a job's ``arrived`` is
the moment its first attempt was submitted); each job ended, its pods reported ``Succeeded``
by their kubelets, its run time after the last of its pods was bound; and an eviction (a pod of
a live attempt deleted by anyone but this bench) counted, its GPU-time kept as held, and the
job given back to its contestant (`LiveStream.replace`) to be submitted again.

What a contestant says (a subclass of `LiveStream`): what it installs on the control plane,
the processes it runs, when its queues are ready, a job's objects for one attempt, how an
evicted attempt is replaced, and how it counts attempts admitted but not placeable.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crdkit.client import Client
from crdkit.resources import Pod
from crdkit.runtime.informer import Informer
from crdkit.testing import ControlPlane, GpuClusterShape, SimulatedKubelet, create_gpu_cluster

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _job_stream import NAMESPACE
from _queue_stream import TEAMS, Span, TeamJob, nominal_gpus, spans, stream_figures
from scheduler_compare import LogSummary

STUCK_S = 5.0
"""An attempt admitted (or partly bound) whose pods are not all bound this long after counts as
admitted but not placeable."""
TERMINATION_CONDITIONS = ("TerminationTarget", "DisruptionTarget")
"""The pod conditions a contestant writes before it deletes a pod it evicts: Kueue's
``TerminationTarget``, and the ``DisruptionTarget`` crdkit writes as kube-scheduler does."""


@dataclass
class Attempt:
    """One creation of a job's pods: the first, or a replacement after an eviction."""

    pods: list[str]
    ungated: set[str] = field(default_factory=set)
    all_ungated: float | None = None
    """When the last of its pods lost its scheduling gates (Kueue admitted it); for pods that
    never had gates, when the last of them was first seen."""
    bound: set[str] = field(default_factory=set)
    first_bound: float | None = None
    all_bound: float | None = None
    unschedulable: bool = False
    """A scheduler reported one of its pods unschedulable."""
    evicted: float | None = None
    evicted_why: str | None = None
    """The reason of the contestant's condition on the pod it deleted (`termination_reason`),
    or ``deleted`` if none."""


@dataclass
class LiveRun:
    """One contestant's live run of one seed's stream; times are ``time.monotonic()`` seconds."""

    contestant: str
    nodes: int
    seed: int
    load: float
    tas: bool
    jobs: list[TeamJob]
    start: float | None = None
    """When team-a's and team-b's jobs were submitted: the stream's t=0."""
    finished: float | None = None
    attempts: dict[str, list[Attempt]] = field(default_factory=dict)
    evicted_gpu_s: dict[str, float] = field(default_factory=dict)
    admitted_not_placeable: int = 0
    victim_grace_s: float = 0.0
    """The grace period of the pods a reclaim evicts (their ``terminationGracePeriodSeconds``)."""
    versions: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    log_warnings: dict[str, int] = field(default_factory=dict)
    log_first_warnings: dict[str, list[str]] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)
    """What a contestant adds to explain its run (`LiveStream.after`)."""

    @property
    def evictions(self) -> dict[str, int]:
        """Evictions per team."""
        counts = {team.name: 0 for team in TEAMS}
        for job in self.jobs:
            counts[job.team] += sum(a.evicted is not None for a in self.attempts.get(job.name, []))
        return counts


def pod_name(job: TeamJob, attempt: int, index: int) -> str:
    """The first attempt's pods are ``<job>-<i>``; a replacement's ``<job>-r<attempt>-<i>``."""
    return f"{job.name}-{index}" if attempt == 0 else f"{job.name}-r{attempt}-{index}"


def partly_bound(attempts: Iterable[Attempt], end: float, stuck_s: float = STUCK_S) -> int:
    """How many ``attempts`` had some but not all of their pods bound for more than
    ``stuck_s`` seconds (from the first bind until the last, the eviction or ``end``): what an
    apiserver shows of a gang admitted and then not placed, when admission is the binding
    itself (crdkit's) and there are no gates to watch."""
    count = 0
    for attempt in attempts:
        if attempt.first_bound is None:
            continue
        until = attempt.all_bound or attempt.evicted or end
        if until - attempt.first_bound > stuck_s:
            count += 1
    return count


def held_spans(run: LiveRun) -> list[Span]:
    """Every whole hold of GPUs: the attempts that ran to their end (`spans`), and the evicted
    ones from all their pods bound to their eviction."""
    held = spans(run.jobs)
    for job in run.jobs:
        for attempt in run.attempts.get(job.name, []):
            if attempt.all_bound is not None and attempt.evicted is not None:
                held.append(Span(job.team, job.pods * job.gpus, attempt.all_bound, attempt.evicted))
    return held


def nominal_reached_s(held: list[Span], team: str, since: float, gpus: int) -> float | None:
    """Seconds from ``since`` to the first moment ``team``'s whole holds (``held``) add up to
    ``gpus`` GPUs; None if they never do. Beside `_queue_stream.reclaim_latencies`, which
    follows the first gangs by submit order, this is reclaim whatever order a contestant
    admits a queue's own gangs in (crdkit moves big gangs ahead in their queue's line)."""
    events: dict[float, int] = {}
    for span in held:
        if span.team == team:
            events[span.start] = events.get(span.start, 0) + span.gpus
            events[span.end] = events.get(span.end, 0) - span.gpus
    holding = 0
    for at in sorted(events):
        holding += events[at]
        if holding >= gpus:
            return max(0.0, at - since)
    return None


def eviction_reasons(run: LiveRun) -> dict[str, int]:
    """How many attempts were ended for each reason the contestant gave (`termination_reason`)."""
    reasons: dict[str, int] = {}
    for attempts in run.attempts.values():
        for attempt in attempts:
            if attempt.evicted_why is not None:
                reasons[attempt.evicted_why] = reasons.get(attempt.evicted_why, 0) + 1
    return reasons


def live_figures(run: LiveRun) -> dict[str, Any]:
    """The run judged as benches/queues_bench.py judges its simulated runs
    (`_queue_stream.stream_figures`), times from the run's start, with what only a live run
    has: jobs done, eviction reasons, errors and the warnings each process logged."""
    row: dict[str, Any] = {
        "contestant": run.contestant,
        "seed": run.seed,
        "jobs": len(run.jobs),
        "jobs_done": sum(job.ended is not None for job in run.jobs),
        "errors": run.errors,
        "log_warnings": run.log_warnings,
    }
    if run.start is None:
        return row
    useful = spans(run.jobs)
    figures_held = held_spans(run)
    figures = stream_figures(
        run.nodes,
        run.jobs,
        figures_held,
        useful,
        run.start,
        evicted=sum(run.evictions.values()),
        admitted_not_placeable=run.admitted_not_placeable,
        victim_grace_s=run.victim_grace_s,
    )
    reclaimer = TEAMS[2]
    wanted = min(
        nominal_gpus(run.nodes),
        sum(job.pods * job.gpus for job in run.jobs if job.team == reclaimer.name),
    )
    reached = nominal_reached_s(
        figures_held, reclaimer.name, run.start + reclaimer.submit_at_s, wanted
    )
    return {
        **row,
        **figures,
        "reclaim_nominal_s": None if reached is None else round(reached, 1),
        "eviction_reasons": eviction_reasons(run),
        "notes": run.notes,
    }


def termination_reason(pod: Any) -> str:
    """Why the contestant ended ``pod``: the reason of the condition it sets before it deletes
    a pod (`TERMINATION_CONDITIONS`: ``WorkloadEvictedDueToPreempted`` from Kueue,
    ``PreemptionByScheduler`` from crdkit), else ``deleted``."""
    status = getattr(pod, "status", None)
    for condition in (status.conditions if status and status.conditions else []) or []:
        if condition.type in TERMINATION_CONDITIONS and condition.status == "True":
            return str(condition.reason or condition.type)
    return "deleted"


def gates(pod: Pod) -> list[str]:
    return [g["name"] for g in (pod.spec.model_extra or {}).get("schedulingGates") or []]


async def listening(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return False
    writer.close()
    await writer.wait_closed()
    return True


async def until(check: Any, within: float, what: str) -> None:
    """Until the coroutine function ``check`` says True; TimeoutError naming ``what`` after
    ``within`` seconds."""
    deadline = time.monotonic() + within
    while not await check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {within:.0f} s")
        await asyncio.sleep(0.25)


class LiveStream:
    """One contestant's live run of ``run``'s stream, its logs in ``workdir``; `run` drives it,
    the methods a subclass overrides say what differs (see the module docstring)."""

    def __init__(self, run: LiveRun, workdir: Path, timeout_s: float) -> None:
        self.live_run = run
        self.workdir = workdir
        self.timeout_s = timeout_s
        self.summaries: dict[str, LogSummary] = {}
        self.pods: dict[str, Pod] = {}
        """The latest of every pod seen, by name."""
        self.owner: dict[str, tuple[TeamJob, Attempt]] = {}
        self.progress: set[asyncio.Task[None]] = set()
        self.all_done = asyncio.Event()
        self._client: Client | None = None
        self._kubelet: SimulatedKubelet | None = None
        self._gate = asyncio.Semaphore(32)

    @property
    def client(self) -> Client:
        assert self._client is not None, "the run has not started"
        return self._client

    @property
    def kubelet(self) -> SimulatedKubelet:
        assert self._kubelet is not None, "the run has not started"
        return self._kubelet

    # -- what a contestant says ---------------------------------------------------------------

    async def install(self, plane: ControlPlane) -> None:
        """What the control plane needs before anything else (CRDs); nothing by default."""

    def running(self, plane: ControlPlane) -> AbstractAsyncContextManager[None]:
        """The contestant's processes, running while the context is open."""
        raise NotImplementedError

    async def ready(self) -> None:
        """Create the contestant's queues and return once it admits through them."""
        raise NotImplementedError

    def objects(self, job: TeamJob, attempt: int, indices: list[int]) -> list[Any]:
        """What is created for attempt ``attempt`` of ``job``, in order: its pods of
        ``indices`` (named by `pod_name`), and whatever must come before them."""
        raise NotImplementedError

    async def replace(self, job: TeamJob, attempt: Attempt) -> None:
        """What the job's owner does once ``attempt`` was evicted: by default, submit the job
        again at once, whole, as a new attempt (its old pods are the contestant's to end)."""
        await self.submit(job, len(self.live_run.attempts[job.name]))

    def not_placeable(self, end: float) -> int:
        """How many attempts the contestant admitted but did not place, the run over at
        ``end``."""
        raise NotImplementedError

    async def after(self) -> None:
        """Once the stream is over, before the control plane goes: what the contestant reads
        back from it into ``notes``; nothing by default."""

    # -- shared ------------------------------------------------------------------------------

    def attempts(self) -> list[Attempt]:
        return [a for attempts in self.live_run.attempts.values() for a in attempts]

    def spawn(self, work: Any) -> None:
        task = asyncio.create_task(work)
        self.progress.add(task)
        task.add_done_callback(self.progress.discard)

    async def create(self, obj: Any) -> None:
        async with self._gate:
            await self.client.create(obj)

    async def submit(self, job: TeamJob, attempt: int, kept: dict[int, str] | None = None) -> None:
        """Attempt ``attempt`` of ``job``: its pods but those of ``kept`` (the previous
        attempt's pods that stay, by index), recorded before they are created so that no event
        about them is missed."""
        kept = kept or {}
        new = [i for i in range(job.pods) if i not in kept]
        names = {i: kept.get(i) or pod_name(job, attempt, i) for i in range(job.pods)}
        made = Attempt([names[i] for i in range(job.pods)])
        self.live_run.attempts.setdefault(job.name, []).append(made)
        for name in made.pods:
            self.owner[name] = (job, made)
        objects = self.objects(job, attempt, new)
        first = [o for o in objects if not _is_pod(o)]
        for obj in first:  # what the pods need (a PodGroup) exists before them
            await self.create(obj)
        await asyncio.gather(*(self.create(o) for o in objects if _is_pod(o)))

    async def finish(self, job: TeamJob, attempt: Attempt) -> None:
        await asyncio.sleep(max(0.0, (attempt.all_bound or 0.0) + job.seconds - time.monotonic()))
        if attempt.evicted is not None:
            return
        await self.kubelet.finish([self.pods[name] for name in attempt.pods if name in self.pods])
        if attempt.evicted is None:
            job.ended = time.monotonic()
            if all(j.ended is not None for j in self.live_run.jobs):
                self.all_done.set()

    def evict(self, job: TeamJob, attempt: Attempt, pod: Any) -> None:
        now = attempt.evicted = time.monotonic()
        attempt.evicted_why = termination_reason(pod)
        if attempt.all_bound is not None:
            held = (now - attempt.all_bound) * job.pods * job.gpus
            run = self.live_run
            run.evicted_gpu_s[job.team] = run.evicted_gpu_s.get(job.team, 0.0) + held
        job.bound, job.first_bound, job.all_bound = set(), None, None
        self.spawn(self.replace(job, attempt))

    def live(self, name: str) -> tuple[TeamJob, Attempt] | None:
        """The job and attempt of pod ``name`` while that attempt still counts."""
        found = self.owner.get(name)
        if found is None or found[1].evicted is not None or found[0].ended is not None:
            return None
        return found

    def gone(self, pod: Any) -> None:
        name = getattr(getattr(pod, "metadata", None), "name", None) or ""
        self.pods.pop(name, None)
        found = self.live(name)
        if found is not None:
            self.evict(*found, pod)

    def seen(self, pod: Pod) -> None:
        name = pod.metadata.name or ""
        self.pods[name] = pod
        found = self.live(name)
        if found is None:
            return
        job, attempt = found
        if pod.metadata.deletion_timestamp is not None:
            # Only the contestant deletes a pod of a live attempt: it evicted it.
            self.evict(job, attempt, pod)
            return
        now = time.monotonic()
        if not gates(pod) and name not in attempt.ungated:
            attempt.ungated.add(name)
            if len(attempt.ungated) == job.pods:
                attempt.all_ungated = now
        conditions = pod.status.conditions if pod.status and pod.status.conditions else []
        if any(
            c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable"
            for c in conditions
        ):
            attempt.unschedulable = True
        if pod.spec.node_name and name not in attempt.bound:
            attempt.bound.add(name)
            job.bound.add(name)
            if attempt.first_bound is None:
                attempt.first_bound = now
            if job.first_bound is None:
                job.first_bound = now
            if len(attempt.bound) == job.pods:
                attempt.all_bound = job.all_bound = now
                self.spawn(self.finish(job, attempt))

    async def run(self) -> None:
        """The run (see the module docstring); raises what the control plane or the
        contestant raised, with what was measured so far in the run."""
        run = self.live_run
        async with (
            ControlPlane(workdir_parent=self.workdir) as plane,
            Client.from_control_plane(plane) as client,
        ):
            self._client = client
            await self.install(plane)
            await plane.create_namespace(NAMESPACE)
            await create_gpu_cluster(client, GpuClusterShape.with_nodes(run.nodes))
            self._kubelet = SimulatedKubelet(client, namespace=NAMESPACE)
            informer = Informer(client, Pod, namespace=NAMESPACE)
            informer.add_event_handler(self.seen, lambda _old, new: self.seen(new), self.gone)
            try:
                async with self.kubelet, informer, self.running(plane):
                    await informer.wait_for_sync(60)
                    await self.ready()
                    await self._stream()
                    await self.after()
            finally:
                run.log_warnings = {name: s.warnings for name, s in self.summaries.items()}
                run.log_first_warnings = {
                    name: s.first for name, s in self.summaries.items() if s.first
                }
        run.admitted_not_placeable = self.not_placeable(run.finished or time.monotonic())

    async def _stream(self) -> None:
        run = self.live_run
        run.start = start = time.monotonic()
        for at in sorted({job.submit_at_s for job in run.jobs}):
            await asyncio.sleep(max(0.0, start + at - time.monotonic()))
            wave = [job for job in run.jobs if job.submit_at_s == at]
            for job in wave:
                job.arrived = time.monotonic()
            await asyncio.gather(*(self.submit(job, 0) for job in wave))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.all_done.wait(), start + self.timeout_s - time.monotonic())
        run.finished = time.monotonic()
        if not self.all_done.is_set():
            left = sum(job.ended is None for job in run.jobs)
            run.errors.append(f"timed out after {self.timeout_s:.0f} s: {left} jobs not done")
        for task in list(self.progress):
            task.cancel()


def _is_pod(obj: Any) -> bool:
    if isinstance(obj, Pod):
        return True
    return isinstance(obj, dict) and obj.get("kind") == "Pod"
