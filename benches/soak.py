"""Soak: an operator and `crdkit scheduler` under churn and faults for hours; leaks and lost work.

    python benches/soak.py --minutes 120
    python benches/soak.py --smoke          # 3 minutes: what tests/integration/benches runs

On one local control plane (`crdkit.testing.ControlPlane`) with ``--nodes`` simulated 8-GPU
nodes in leaves of 16, two processes run as their users run them, each its own process and
each talking to the apiserver through one `HttpFaultProxy`:

- the hello operator (``crdkit run examples.hello.operator:HelloReconciler``), watching the
  ``soak`` namespace;
- ``crdkit scheduler`` (coscheduling PodGroups), placing the gangs of the ``jobs`` namespace.

This bench, with a client of its own straight to the apiserver, keeps both busy for
``--minutes``:

- Hello churn: ``--hello-rate`` operations a second on a fixed pool of ``--hellos`` names (a
  missing one is created, an existing one has its greeting changed, which bumps its
  generation, or is deleted together with its ConfigMap, as the garbage collector would);
- gang churn: gangs of 1, 2, 4 or 8 node-filling pods (`_job_stream`'s sizes up to 8) with
  their PodGroup, at most ``--gangs-in-flight`` at a time. It plays the kubelet and the job
  controller: a gang runs 5-15 s from the moment its last pod is bound, then its pods and
  PodGroup are deleted; a pod someone else deletes (the scheduler rolling back a bind that
  failed) is made again, unbound.

Faults, after the warm-up, every ``--fault-every`` seconds (closer if needed so that each kind
happens at least once), in the order of `FAULT_CYCLE`: a SIGKILL of the operator (restarted at
once, as its Deployment would), watch cuts at the proxy, a 5xx storm (every request through the
proxy answered 503 with probability one half for ``--storm-seconds``), and a restart of the
apiserver (`ControlPlane.restart_apiserver`: etcd keeps every object).

Every ``--sample-every`` seconds, per process: RSS, open file descriptors (``/proc/PID/fd``),
and from its ``/metrics``: asyncio tasks (``crdkit_asyncio_tasks``), work-queue depth (the sum
of ``workqueue_depth``), the scheduler's waiting gangs (``crdkit_scheduler_pending_gangs``)
and reconcile errors. The last ``--quiet`` seconds no churn and no
fault happen (running gangs are left running); then the bench lists what was never
reconciled (a Hello whose ``status.observedGeneration`` is not its generation, whose Ready
condition or ConfigMap does not say its greeting) and every partial gang (some but not all
of its pods bound), and how many gangs wait with none bound (``gangs_waiting_at_end``).

One JSON object on stdout:

- per process (``operator``, ``scheduler``): ``rss_mb`` (first and last after warm-up, max),
  ``rss_slope_mb_per_10min`` (least squares over the samples after warm-up; across an
  operator's restarts each incarnation keeps its own intercept and they share the slope, and
  an incarnation's warm-up is ``--restart-warmup`` seconds), ``fds`` and ``tasks`` (first after
  warm-up, last, max; an operator's of its last incarnation), ``queue_depth_max`` and
  ``pending_gangs_max`` (``null`` where the process has no such metric),
  ``reconcile_errors`` (summed over incarnations), ``incarnations``, and ``timeline``: about
  one sample a minute, ``[t_s, incarnation, RSS MB, fds, of which sockets, tasks]``;
- ``errors_by_kind``: warnings and errors the processes logged, by process, level, logger and
  message (digits folded), most frequent first;
- ``faults``: how many of each kind were injected, and ``fault_log`` (when, what);
- ``churn``: Hello operations and gangs submitted, bound whole and finished, and the bench's
  own failed requests (during an apiserver restart, say);
- ``unreconciled`` and ``partial_gangs``: the lists, empty when all is well;
- ``targets`` and ``targets_met``: RSS slope at most 1 MB per 10 minutes after warm-up, fds
  and tasks flat (last after warm-up within `FD_MARGIN` and `task_margin` of the first),
  nothing unreconciled, no partial gang.

Real time throughout: the figures depend on the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from crdkit.client import Client, KubernetesError
from crdkit.client.errors import AlreadyExists, NotFound
from crdkit.resources import ConfigMap, Pod
from crdkit.runtime.informer import Informer
from crdkit.scheduling.groups.coscheduling import CoschedulingPodGroup
from crdkit.scheduling.groups.crds import install_pod_group_crds
from crdkit.testing import ControlPlane
from crdkit.testing.envtest.processes import free_ports
from crdkit.testing.faults import HttpFaultProxy

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))  # the examples

from examples.hello.operator import Hello  # noqa: E402

from _job_stream import LEAF  # noqa: E402
from _job_stream import NAMESPACE as JOBS  # noqa: E402
from scheduler_compare import CRDKIT, Job, add_nodes, pod_manifests  # noqa: E402

HELLO_CRD = ROOT / "examples" / "hello" / "hello.example.com_hellos.yaml"
HELLOS = "soak"
GANG_SIZES, GANG_WEIGHTS = (1, 2, 4, 8), (35, 30, 20, 15)
GANG_SECONDS = (5.0, 15.0)
FAULT_CYCLE = (
    "operator_kill",
    "watch_cut",
    "storm_5xx",
    "apiserver_restart",
    "watch_cut",
    "storm_5xx",
)
"""The operator is killed first, at the warm-up's end, so that its last incarnation, whose
fds and tasks are judged, lives as long as the schedule allows."""
FD_MARGIN = 4
RSS_SLOPE_TARGET = 1.0  # MB per 10 minutes


def task_margin(first: float) -> float:
    """How far a process's tasks may end above their first count after warm-up and still be
    flat: requests in flight come and go, a leak only grows."""
    return max(5.0, 0.1 * first)


# -- the processes ---------------------------------------------------------------------------


@dataclass
class Sample:
    at: float
    incarnation: int
    rss_mb: float
    fds: int
    tasks: float | None
    queue_depth: float | None
    reconcile_errors: float | None
    pending_gangs: float | None  # the scheduler's queue: its gangs waiting in line
    sockets: int = 0  # of the fds: which kind grows tells where a leak is


@dataclass
class Child:
    """One process under soak, restartable, its output appended to ``log``."""

    name: str
    command: list[str]
    log: Path
    metrics_port: int
    probe_port: int
    process: subprocess.Popen[bytes] | None = None
    incarnation: int = -1
    started_at: float = 0.0
    samples: list[Sample] = field(default_factory=list)

    async def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(  # noqa: ASYNC220 - returns at once
                self.command,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *_pythonpath()])},
            )
        self.incarnation += 1
        self.started_at = time.monotonic()
        await self.wait_ready()

    async def wait_ready(self, within: float = 120.0) -> None:
        deadline = time.monotonic() + within
        url = f"http://127.0.0.1:{self.probe_port}/readyz"
        async with aiohttp.ClientSession() as session:
            while time.monotonic() < deadline:
                if self.process is None or self.process.poll() is not None:
                    raise RuntimeError(f"{self.name} exited; see {self.log}")
                with contextlib.suppress(aiohttp.ClientError, OSError):
                    async with session.get(url) as answer:
                        if answer.status == 200:
                            return
                await asyncio.sleep(0.2)
        raise RuntimeError(f"{self.name} not ready within {within} s; see {self.log}")

    async def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as when a node dies or the OOM killer strikes."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            await asyncio.to_thread(self.process.wait)

    async def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                await asyncio.to_thread(self.process.wait, 30)
            except subprocess.TimeoutExpired:
                await self.kill()


def _pythonpath() -> list[str]:
    return [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]


def children(kubeconfig: Path, logs: Path) -> tuple[Child, Child]:
    """The operator and the scheduler, as their users would start them."""
    ports = free_ports(4)
    crdkit = [sys.executable, "-c", "from crdkit.cli import main; main()"]
    common = [
        f"--kubeconfig={kubeconfig}",
        "--log-level=warning",
        # asyncio's own loop whether or not uvloop is installed: figures that compare.
        "--event-loop=asyncio",
    ]
    operator = Child(
        "operator",
        [
            *crdkit,
            "run",
            "examples.hello.operator:HelloReconciler",
            f"--namespace={HELLOS}",
            f"--metrics-bind-address=127.0.0.1:{ports[0]}",
            f"--health-probe-bind-address=127.0.0.1:{ports[1]}",
            *common,
        ],
        logs / "operator.log",
        ports[0],
        ports[1],
    )
    scheduler = Child(
        "scheduler",
        [
            *crdkit,
            "scheduler",
            f"--name={CRDKIT}",
            f"--levels={LEAF}",
            "--pod-groups=coscheduling",
            f"--metrics-bind-address=127.0.0.1:{ports[2]}",
            f"--health-probe-bind-address=127.0.0.1:{ports[3]}",
            *common,
        ],
        logs / "scheduler.log",
        ports[2],
        ports[3],
    )
    return operator, scheduler


# -- sampling --------------------------------------------------------------------------------


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def open_fds(pid: int) -> tuple[int, int] | None:
    """Open file descriptors of ``pid``, and how many of them are sockets."""
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    sockets = 0
    for name in names:
        with contextlib.suppress(OSError):  # closed since the listing
            sockets += os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:")
    return len(names), sockets


def metric_sums(text: str) -> dict[str, float]:
    """Each sample name of a Prometheus text page, its values summed over labels."""
    sums: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            sums[sample.name] = sums.get(sample.name, 0.0) + sample.value
    return sums


async def sample(child: Child, session: aiohttp.ClientSession) -> None:
    """One sample of ``child``, if it runs; a scrape that fails leaves its figures out."""
    process = child.process
    if process is None or process.poll() is not None:
        return
    rss, fds = rss_mb(process.pid), open_fds(process.pid)
    if rss is None or fds is None:
        return
    sums: dict[str, float] = {}
    with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError):
        url = f"http://127.0.0.1:{child.metrics_port}/metrics"
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=5)) as answer:
            sums = metric_sums(await answer.text())
    child.samples.append(
        Sample(
            time.monotonic(),
            child.incarnation,
            rss,
            fds[0],
            sums.get("crdkit_asyncio_tasks"),
            sums.get("workqueue_depth"),
            sums.get("controller_runtime_reconcile_errors_total"),
            sums.get("crdkit_scheduler_pending_gangs"),
            fds[1],
        )
    )


# -- churn -----------------------------------------------------------------------------------


@dataclass
class Tally:
    """What the bench did, and how many of its own requests failed."""

    counts: Counter[str] = field(default_factory=Counter)

    async def attempt(self, what: str, call: Awaitable[Any]) -> bool:
        """Await ``call``, counted under ``what``; a failure (an apiserver restarting, a
        storm's 503 on a retry) is counted as the bench's own, not the processes'."""
        try:
            await call
        except (KubernetesError, OSError, aiohttp.ClientError, TimeoutError):
            self.counts["bench_request_errors"] += 1
            return False
        self.counts[what] += 1
        return True

    async def until_done(self, what: str, call: Callable[[], Awaitable[Any]]) -> None:
        """``call()`` until it succeeds: a gang created or deleted halfway would be left
        partial by the bench, not by the scheduler."""
        while not await self.attempt(what, call()):  # noqa: ASYNC110 - a retry, not a wait
            await asyncio.sleep(1.0)


GREETINGS = ("Hello", "Hi", "Hey", "Howdy", "Salut", "Hallo", "Hola")


async def hello_churn(
    client: Client, pool: int, rate: float, rng: random.Random, tally: Tally
) -> None:
    """Creates, updates (a new greeting: a new generation) and deletes Hellos, forever."""
    while True:
        await asyncio.sleep(1.0 / rate)
        await hello_step(client, f"h{rng.randrange(pool):03d}", rng, tally)


async def hello_step(client: Client, name: str, rng: random.Random, tally: Tally) -> None:
    """One operation on the Hello ``name``: created if missing, else updated (three times in
    four) or deleted."""
    greeting = rng.choice(GREETINGS)
    try:
        await client.get(Hello, name, namespace=HELLOS)
    except NotFound:
        hello = Hello.model_validate(
            {
                "metadata": {"name": name, "namespace": HELLOS},
                "spec": {"greeting": greeting, "target": name},
            }
        )
        await tally.attempt("hello_create", client.create(hello))
        return
    except (KubernetesError, OSError, aiohttp.ClientError, TimeoutError):
        tally.counts["bench_request_errors"] += 1
        return
    if rng.random() < 0.75:
        patch = {"spec": {"greeting": greeting}}
        await tally.attempt("hello_update", client.patch(Hello, name, patch, namespace=HELLOS))
    elif await tally.attempt("hello_delete", client.delete(Hello, name, namespace=HELLOS)):
        # The garbage collector's part (no controller-manager runs here); the ConfigMap may
        # be gone already, or never made.
        with contextlib.suppress(NotFound):
            await client.delete(ConfigMap, f"{name}-greeting", namespace=HELLOS)
            tally.counts["configmap_collect"] += 1


class Gangs:
    """Submits gangs, plays the kubelet's and job controller's part, and finds partial ones."""

    def __init__(self, client: Client, in_flight: int, rng: random.Random, tally: Tally) -> None:
        self.client = client
        self.in_flight = in_flight
        self.rng = rng
        self.tally = tally
        self.jobs: dict[str, Job] = {}
        self.by_pod: dict[str, Job] = {}
        self.manifests: dict[str, Pod] = {}  # by pod name, to make a deleted pod again
        self.ending_jobs: set[str] = set()  # whose pods the bench itself deletes
        self.remaking: set[asyncio.Task[None]] = set()
        self.running: set[asyncio.Task[None]] = set()  # sleeping out a gang's run time
        self.ending: set[asyncio.Task[None]] = set()  # deleting a gang's pods
        self.frozen = False
        self.names = (f"g{i:06d}" for i in itertools.count())
        self.informer = Informer(client, Pod, namespace=JOBS)
        self.informer.add_event_handler(self.seen, lambda _old, new: self.seen(new), self.deleted)

    def unfinished(self) -> int:
        return sum(job.done is None for job in self.jobs.values())

    async def submit_forever(self) -> None:
        while True:
            if self.unfinished() < self.in_flight:
                await self.submit()
            else:
                await asyncio.sleep(0.5)

    async def submit(self) -> None:
        size = self.rng.choices(GANG_SIZES, GANG_WEIGHTS)[0]
        job = Job(next(self.names), size, self.rng.uniform(*GANG_SECONDS))
        self.jobs[job.name] = job
        pods = pod_manifests(job, "crdkit")
        for pod in pods:
            self.by_pod[pod.metadata.name or ""] = job
            self.manifests[pod.metadata.name or ""] = pod
        group = CoschedulingPodGroup.model_validate(
            {"metadata": {"name": job.name, "namespace": JOBS}, "spec": {"minMember": size}}
        )
        await self.tally.until_done("podgroup_create", partial(self._create, group))
        for pod in pods:
            await self.tally.until_done("pod_create", partial(self._create, pod))
        self.tally.counts["gangs_submitted"] += 1

    async def _create(self, obj: Any) -> None:
        with contextlib.suppress(AlreadyExists):  # created by an attempt whose answer was lost
            await self.client.create(obj)

    def seen(self, pod: Pod) -> None:
        name, node = pod.metadata.name or "", pod.spec.node_name
        job = self.by_pod.get(name)
        if job is None or not node or name in job.bound:
            return
        job.bound.add(name)
        if len(job.bound) == job.pods:
            job.all_bound = time.monotonic()
            self.tally.counts["gangs_bound_whole"] += 1
            if not self.frozen:
                task = asyncio.create_task(self.run(job))
                self.running.add(task)
                task.add_done_callback(self.running.discard)

    def deleted(self, pod: Pod) -> None:
        """A pod of a running gang deleted by someone else (the scheduler rolling a failed
        bind back) is made again, unbound, as its job controller would."""
        name = pod.metadata.name or ""
        job = self.by_pod.get(name)
        if job is None or job.name in self.ending_jobs:
            return
        job.bound.discard(name)
        task = asyncio.create_task(
            self.tally.until_done("pod_remade", partial(self._create, self.manifests[name]))
        )
        self.remaking.add(task)
        task.add_done_callback(self.remaking.discard)

    async def run(self, job: Job) -> None:
        await asyncio.sleep(job.seconds)
        task = asyncio.create_task(self.end(job))  # not cancelled by a freeze: no half-deleted gang
        self.ending.add(task)
        task.add_done_callback(self.ending.discard)

    async def end(self, job: Job) -> None:
        self.ending_jobs.add(job.name)
        for i in range(job.pods):
            pod = f"{job.name}-{i}"
            await self.tally.until_done(
                "pod_delete",
                lambda pod=pod: self._delete(Pod, pod, grace_period_seconds=0),  # type: ignore[misc]
            )
            self.by_pod.pop(pod, None)
            self.manifests.pop(pod, None)
        await self.tally.until_done(
            "podgroup_delete", partial(self._delete, CoschedulingPodGroup, job.name)
        )
        job.done = time.monotonic()
        self.ending_jobs.discard(job.name)
        self.tally.counts["gangs_finished"] += 1

    async def _delete(self, kind: Any, name: str, **options: Any) -> None:
        with contextlib.suppress(NotFound):
            await self.client.delete(kind, name, namespace=JOBS, **options)

    async def freeze(self) -> None:
        """No gang ends from now on: what is bound stays bound and nothing frees, so after a
        quiet period every gang is bound whole or waiting, unless one was left partial."""
        self.frozen = True
        for task in list(self.running):
            task.cancel()
        await asyncio.gather(*self.running, return_exceptions=True)
        await asyncio.gather(*self.ending, return_exceptions=True)
        await asyncio.gather(*self.remaking, return_exceptions=True)

    async def abandon(self) -> None:
        """Cancel every task of the churn (the soak was stopped)."""
        tasks = [*self.running, *self.ending, *self.remaking]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def partial(self) -> tuple[list[dict[str, Any]], int]:
        """Gangs with some but not all pods bound, from a fresh list; and how many wait with
        none bound."""
        pods = await self.client.list(Pod, namespace=JOBS)
        bound: Counter[str] = Counter()
        for pod in pods.items:
            job = self.by_pod.get(pod.metadata.name or "")
            if job is not None and pod.spec.node_name:
                bound[job.name] += 1
        live = [job for job in self.jobs.values() if job.done is None]
        partial = [
            {"gang": job.name, "pods": job.pods, "bound": bound[job.name]}
            for job in live
            if 0 < bound[job.name] < job.pods
        ]
        return partial, sum(bound[job.name] == 0 for job in live)


# -- faults ----------------------------------------------------------------------------------


@dataclass
class Faults:
    plane: ControlPlane
    proxy: HttpFaultProxy
    operator: Child
    storm_seconds: float
    counts: Counter[str] = field(default_factory=Counter)
    log: list[dict[str, Any]] = field(default_factory=list)

    async def inject(self, kind: str, at: float) -> None:
        detail: dict[str, Any] = {}
        if kind == "operator_kill":
            await self.operator.kill()
            await self.operator.start()  # a Deployment's replacement
            detail["ready_after_s"] = round(time.monotonic() - self.operator.started_at, 2)
        elif kind == "watch_cut":
            detail["watches_cut"] = self.proxy.cut_watches()
        elif kind == "storm_5xx":
            rule = self.proxy.fail(503, probability=0.5, seed=len(self.log))
            await asyncio.sleep(self.storm_seconds)
            self.proxy.remove_fault(rule)
            detail["seconds"] = self.storm_seconds
        elif kind == "apiserver_restart":
            started = time.monotonic()
            await self.plane.restart_apiserver()
            detail["down_s"] = round(time.monotonic() - started, 2)
        self.counts[kind] += 1
        self.log.append({"t_s": round(at, 1), "kind": kind, **detail})


def fault_times(warmup: float, last: float, every: float) -> list[float]:
    """When faults start: from the warm-up's end to ``last``, every ``every`` seconds, or
    closer so that each kind of `FAULT_CYCLE` comes at least once."""
    kinds = len(set(FAULT_CYCLE))
    span = max(0.0, last - warmup)
    step = min(every, span / max(kinds - 1, 1))
    count = int(span / step + 1e-9) + 1 if step > 0 else 1  # the last time may be ``last``
    return [warmup + i * step for i in range(count)]


# -- the final checks ------------------------------------------------------------------------


async def unreconciled(client: Client) -> list[dict[str, Any]]:
    """Every Hello whose status or ConfigMap does not show its current spec."""
    hellos = await client.list(Hello, namespace=HELLOS)
    maps = {cm.metadata.name: cm for cm in (await client.list(ConfigMap, namespace=HELLOS)).items}
    found = []
    for hello in hellos.items:
        name = hello.metadata.name or ""
        message = f"{hello.spec.greeting}, {hello.spec.target}!"
        status = hello.status
        ready = [c for c in (status.conditions if status else []) if c.type == "Ready"]
        config_map = maps.get(f"{name}-greeting")
        why = []
        if status is None or status.observed_generation != hello.metadata.generation:
            seen = status.observed_generation if status else None
            why.append(f"observedGeneration {seen} < generation {hello.metadata.generation}")
        if not ready or ready[0].status != "True" or ready[0].message != message:
            why.append("Ready condition does not say the greeting")
        if config_map is None or (config_map.data or {}).get("message") != message:
            why.append("ConfigMap missing or stale")
        if why:
            found.append({"hello": name, "why": why})
    return found


_JSON_LEVEL = ("warning", "error", "critical")


def errors_by_kind(logs: dict[str, Path], keep: int = 25) -> dict[str, int]:
    """Warnings and errors in the processes' JSON logs, by process, level, logger and message
    (digits folded into N, so one kind is one count); lines that are not JSON (a traceback on
    stderr) count as ``raw``."""
    kinds: Counter[str] = Counter()
    for process, path in logs.items():
        with contextlib.suppress(FileNotFoundError), path.open(errors="replace") as lines:
            for line in lines:
                kind = _kind(process, line.strip())
                if kind is not None:
                    kinds[kind] += 1
    return dict(kinds.most_common(keep))


def _kind(process: str, line: str) -> str | None:
    if not line:
        return None
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return f"{process}: raw: {re.sub(r'[0-9]+', 'N', line)[:120]}"
    if not isinstance(record, dict) or record.get("level") not in _JSON_LEVEL:
        return None
    message = re.sub(r"[0-9]+", "N", str(record.get("msg", "")))[:120]
    return f"{process}: {record['level']}: {record.get('logger')}: {message}"


# -- figures ---------------------------------------------------------------------------------


def settled(child: Child, warmup: float, restart_warmup: float) -> list[Sample]:
    """The samples after each incarnation's warm-up (the first's ``warmup``, later ones'
    ``restart_warmup``), from each incarnation's start as the first sample saw it."""
    starts: dict[int, float] = {}
    for s in child.samples:
        starts.setdefault(s.incarnation, s.at)
    return [
        s
        for s in child.samples
        if s.at - starts[s.incarnation] >= (warmup if s.incarnation == 0 else restart_warmup)
    ]


def pooled_slope(samples: list[Sample]) -> float | None:
    """Least-squares slope of RSS over time (MB per second) with one intercept for each
    incarnation: a restart starts low again, which is no leak but would tilt a single fit."""
    groups: dict[int, list[Sample]] = {}
    for s in samples:
        groups.setdefault(s.incarnation, []).append(s)
    top = bottom = 0.0
    for group in groups.values():
        mean_t = sum(s.at for s in group) / len(group)
        mean_y = sum(s.rss_mb for s in group) / len(group)
        top += sum((s.at - mean_t) * (s.rss_mb - mean_y) for s in group)
        bottom += sum((s.at - mean_t) ** 2 for s in group)
    return top / bottom if len(samples) >= 3 and bottom > 0 else None


def first_last_max(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"first": None, "last": None, "max": None}
    return {"first": values[0], "last": values[-1], "max": max(values)}


def process_figures(child: Child, warmup: float, restart_warmup: float) -> dict[str, Any]:
    after = settled(child, warmup, restart_warmup)
    last_life = [s for s in after if s.incarnation == child.incarnation]
    slope = pooled_slope(after)
    errors: dict[int, float] = {}
    for s in child.samples:
        if s.reconcile_errors is not None:
            errors[s.incarnation] = s.reconcile_errors
    return {
        "incarnations": child.incarnation + 1,
        "samples": len(child.samples),
        "samples_after_warmup": len(after),
        "rss_mb": {k: _round(v, 1) for k, v in first_last_max([s.rss_mb for s in after]).items()},
        "rss_slope_mb_per_10min": None if slope is None else round(slope * 600, 3),
        "fds": first_last_max([float(s.fds) for s in last_life]),
        "tasks": first_last_max([s.tasks for s in last_life if s.tasks is not None]),
        "queue_depth_max": _max_of([s.queue_depth for s in child.samples]),
        "pending_gangs_max": _max_of([s.pending_gangs for s in child.samples]),
        "reconcile_errors": sum(errors.values()),
        "timeline": timeline(child.samples),
    }


def timeline(samples: list[Sample], step: float = 60.0) -> list[list[float | None]]:
    """About one sample a ``step``: ``[t_s, incarnation, RSS MB, fds, sockets, tasks]``, to
    tell a steady climb from a step."""
    if not samples:
        return []
    rows: list[list[float | None]] = []
    start, due = samples[0].at, samples[0].at
    for s in samples:
        if s.at >= due or s is samples[-1]:
            rows.append(
                [round(s.at - start), s.incarnation, round(s.rss_mb, 1), s.fds, s.sockets, s.tasks]
            )
            due = s.at + step
    return rows


def _max_of(values: list[float | None]) -> float | None:
    """The largest value read; ``None`` if the process never exposed the metric."""
    return max((v for v in values if v is not None), default=None)


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def targets(figures: dict[str, dict[str, Any]], lost: int, partial: int) -> dict[str, bool]:
    met: dict[str, bool] = {}
    for name, fig in figures.items():
        slope = fig["rss_slope_mb_per_10min"]
        met[f"{name}_rss_slope"] = slope is not None and slope <= RSS_SLOPE_TARGET
        fds, tasks = fig["fds"], fig["tasks"]
        met[f"{name}_fds_flat"] = (
            fds["last"] is not None and fds["last"] <= fds["first"] + FD_MARGIN
        )
        met[f"{name}_tasks_flat"] = tasks["last"] is not None and tasks["last"] <= tasks[
            "first"
        ] + task_margin(tasks["first"])
    met["zero_unreconciled"] = lost == 0
    met["zero_partial_gangs"] = partial == 0
    return met


# -- the run ---------------------------------------------------------------------------------


@dataclass
class Settings:
    minutes: float
    nodes: int = 32
    hellos: int = 40
    hello_rate: float = 2.0
    gangs_in_flight: int = 10
    fault_every: float = 60.0
    storm_seconds: float = 10.0
    quiet: float = 30.0
    sample_every: float = 5.0
    warmup: float | None = None
    restart_warmup: float = 30.0
    seed: int = 1
    log_dir: Path | None = None

    @property
    def warmup_s(self) -> float:
        """By default 15 % of the run, between 40 s and 5 minutes."""
        if self.warmup is not None:
            return self.warmup
        return min(300.0, max(40.0, 0.15 * self.minutes * 60))


async def soak(settings: Settings) -> dict[str, Any]:
    # SIGTERM (a kill, a runner's timeout) cancels the soak, so its operator and scheduler
    # are stopped on the way out: it used to end this process alone, and they ran on orphaned.
    this = asyncio.current_task()
    assert this is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, this.cancel)
    rng = random.Random(settings.seed)
    tally = Tally()
    async with ControlPlane() as plane, Client.from_control_plane(plane) as client:
        logs = settings.log_dir or plane.workdir
        logs.mkdir(parents=True, exist_ok=True)
        await plane.install_crds([HELLO_CRD])
        await plane.create_namespace(HELLOS)
        await plane.create_namespace(JOBS)
        await install_pod_group_crds(client, ["coscheduling"])
        await add_nodes(client, settings.nodes)
        with HttpFaultProxy.for_control_plane(plane) as proxy:
            kubeconfig = proxy.write_kubeconfig(plane.workdir / "proxy.kubeconfig")
            operator, scheduler = children(kubeconfig, logs)
            faults = Faults(plane, proxy, operator, settings.storm_seconds)
            try:
                await operator.start()
                await scheduler.start()
                ending = await _run(settings, client, faults, [operator, scheduler], rng, tally)
            finally:
                await operator.stop()
                await scheduler.stop()
            errors = errors_by_kind({"operator": operator.log, "scheduler": scheduler.log})
    warmup, restart = settings.warmup_s, settings.restart_warmup
    figures = {c.name: process_figures(c, warmup, restart) for c in (operator, scheduler)}
    met = targets(figures, len(ending["unreconciled"]), len(ending["partial_gangs"]))
    return {
        "bench": "soak",
        "minutes": settings.minutes,
        "warmup_s": warmup,
        "restart_warmup_s": restart,
        "nodes": settings.nodes,
        "processes": figures,
        "errors_by_kind": errors,
        "faults": dict(faults.counts),
        "fault_log": faults.log,
        "churn": dict(tally.counts),
        **ending,
        "targets": {
            "rss_slope_mb_per_10min_max": RSS_SLOPE_TARGET,
            "fd_margin": FD_MARGIN,
            "met": met,
        },
        "targets_met": all(met.values()),
        "cpus": os.cpu_count(),
    }


async def _run(
    settings: Settings,
    client: Client,
    faults: Faults,
    processes: list[Child],
    rng: random.Random,
    tally: Tally,
) -> dict[str, Any]:
    """Churn, faults on schedule, then the quiet period and the final checks."""
    start = time.monotonic()
    duration = settings.minutes * 60
    quiet_from = duration - settings.quiet
    # The last fault, a storm at the longest, is over well before the quiet period.
    schedule = fault_times(
        settings.warmup_s, quiet_from - settings.storm_seconds - 15, settings.fault_every
    )
    gangs = Gangs(client, settings.gangs_in_flight, rng, tally)
    async with gangs.informer, aiohttp.ClientSession() as session:
        try:
            return await _churn_and_check(
                settings, client, faults, processes, gangs, session, start, schedule
            )
        except asyncio.CancelledError:
            await gangs.abandon()  # stopped: its tasks go before the client they use closes
            raise


async def _churn_and_check(
    settings: Settings,
    client: Client,
    faults: Faults,
    processes: list[Child],
    gangs: Gangs,
    session: aiohttp.ClientSession,
    start: float,
    schedule: list[float],
) -> dict[str, Any]:
    duration = settings.minutes * 60
    quiet_from = duration - settings.quiet
    await gangs.informer.wait_for_sync(60)
    sampling = asyncio.create_task(
        _sample_forever(processes, session, settings.sample_every, faults.proxy)
    )
    churn = [
        asyncio.create_task(
            hello_churn(client, settings.hellos, settings.hello_rate, gangs.rng, gangs.tally)
        ),
        asyncio.create_task(gangs.submit_forever()),
    ]
    try:
        for at, kind in zip(schedule, itertools.cycle(FAULT_CYCLE), strict=False):
            await asyncio.sleep(max(0.0, start + at - time.monotonic()))
            await faults.inject(kind, time.monotonic() - start)
        await asyncio.sleep(max(0.0, start + quiet_from - time.monotonic()))
    finally:
        for task in churn:
            task.cancel()
        await asyncio.gather(*churn, return_exceptions=True)
    await gangs.freeze()
    await asyncio.sleep(max(0.0, start + duration - time.monotonic()))
    sampling.cancel()
    await asyncio.gather(sampling, return_exceptions=True)
    for child in processes:  # the state at the end, after the quiet period
        await sample(child, session)
    partial, waiting = await gangs.partial()
    return {
        "unreconciled": await unreconciled(client),
        "partial_gangs": partial,
        "gangs_waiting_at_end": waiting,
        "seconds": round(time.monotonic() - start, 1),
    }


async def _sample_forever(
    processes: list[Child], session: aiohttp.ClientSession, every: float, proxy: HttpFaultProxy
) -> None:
    while True:
        for child in processes:
            await sample(child, session)
        # The proxy records every request it forwards; a soak would pile them up.
        proxy.clear_requests()
        await asyncio.sleep(every)


SMOKE = {"minutes": 3.0, "warmup": 40.0, "restart_warmup": 20.0, "storm_seconds": 6.0}
"""``--smoke``: 3 minutes, the form tests/integration/benches/test_soak_smoke.py runs."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--minutes", type=float, default=120.0)
    parser.add_argument("--smoke", action="store_true", help=f"preset: {SMOKE}")
    parser.add_argument("--nodes", type=int, default=32, help="a multiple of 16 (whole leaves)")
    parser.add_argument("--hellos", type=int, default=40, help="the pool of Hello names")
    parser.add_argument("--hello-rate", type=float, default=2.0, help="Hello operations a second")
    parser.add_argument("--gangs-in-flight", type=int, default=10)
    parser.add_argument("--fault-every", type=float, default=60.0, help="seconds")
    parser.add_argument("--storm-seconds", type=float, default=10.0)
    parser.add_argument(
        "--quiet", type=float, default=30.0, help="seconds without churn at the end"
    )
    parser.add_argument("--sample-every", type=float, default=5.0, help="seconds")
    parser.add_argument(
        "--warmup",
        type=float,
        default=None,
        help="seconds (default: 15%% of the run, 40 s to 5 min)",
    )
    parser.add_argument(
        "--restart-warmup", type=float, default=30.0, help="seconds, after a restart"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-dir", type=Path, default=None, help="keep the processes' logs here")
    args = vars(parser.parse_args(argv))
    if args.pop("smoke"):
        args.update(SMOKE)
    settings = Settings(**args)
    if settings.nodes < 16 or settings.nodes % 16:
        parser.error("--nodes: a positive multiple of 16")
    if settings.minutes * 60 < settings.warmup_s + settings.quiet + 60:
        parser.error("--minutes: too short for the warm-up, a minute of faults and the quiet")
    try:
        figures = asyncio.run(soak(settings))
    except asyncio.CancelledError:
        print("soak: stopped by SIGTERM; its processes were stopped", file=sys.stderr)
        return 128 + signal.SIGTERM
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
