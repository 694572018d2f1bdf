"""`crdkit scheduler` against kube-scheduler on the same saturated stream, live: JSON on stdout.

    python benches/scheduler_compare.py --nodes 256 --seeds 7,8,9
    python benches/scheduler_compare.py --nodes 256 --seeds 7 --contestants kube-gang,crdkit-kube

Each contestant gets its own fresh local control plane (kube-apiserver and etcd from
`tools/envtest`) with ``--nodes`` simulated 8-GPU nodes in leaves of 16. The stream is the one
`benches/queue_sim_bench.py` draws for the seed: jobs of 1, 2, 4, 8 or 16 node-filling pods
(35/30/20/10/5 %) until the pods want ``--load`` times the cluster's GPUs, all submitted at
once. Jobs of 8 pods or more require one leaf (Kueue's ``podset-required-topology``), smaller
ones prefer it. A job runs 20-40 s (seeded) from the moment all its pods are bound; then this
bench deletes its pods, which frees their nodes. Nothing else runs pods: binding is the
scheduler's, the rest is this bench playing kubelet and job controller.

Contestants:

- ``crdkit``: ``crdkit scheduler`` in a process of its own, each job a coscheduling PodGroup
  of all its pods, the policy given by ``--policy`` (and ``--settle-seconds`` and each
  ``--scheduler-flag``, if given);
  the stream is submitted once its ``/readyz`` answers;
- ``kube-scheduler``: kube-scheduler, in a process of its own, from the same
  ``k8s.io/kubernetes`` module as the apiserver (`tools/kube-scheduler/build.sh`), with its
  default profile, given the very same pods without PodGroups or topology (it reads neither);
- ``kube-gang``: the same kube-scheduler with upstream's gang scheduling on
  (``--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true``), on a control
  plane that serves Kubernetes' own PodGroup (``ControlPlane(workload_api=True)``: those gates,
  ``scheduling.k8s.io/v1beta1``, and ``PodGroupProtection`` admission off, since no
  controller-manager would lift its finalizer). It is given the ``kube-scheduler`` pods plus
  one ``scheduling.k8s.io/v1beta1`` PodGroup per job, created before its pods, which join it
  through ``spec.schedulingGroup.podGroupName``: ``schedulingPolicy.gang.minCount`` all the
  job's pods, and from 8 pods up the required ``schedulingConstraints.topology`` on the leaf
  label; smaller jobs get a gang with no topology (upstream has no preferred mode). Neither the
  group nor its pods name a priority class (kube-scheduler refuses a group whose class differs
  from its pods'). When a job ends the bench deletes its PodGroup after its pods;
- ``crdkit-kube``: ``crdkit scheduler`` with ``--pod-groups=kubernetes`` on the very same
  objects as ``kube-gang`` (the gated plane, the same PodGroups and pods, only
  ``schedulerName`` differs): crdkit judged on upstream's own gang API, where ``crdkit`` has
  its coscheduling PodGroups and Kueue's annotations (a preferred leaf for small jobs). It gets
  no ``--topology`` default either, so its small jobs are as unconstrained as upstream's;
- ``example`` (``--contestants`` names it): the gang scheduler example (``python -m
  examples.gang_scheduler``, the Job controller and the library's scheduler in one process),
  given each job as a Volcano Job of one task (``minAvailable`` all its pods; ``networkTopology``
  hard at the leaf tier for 8 pods or more, soft below); it creates the pods itself. Its pods are
  ended by marking them ``Succeeded`` (the Job controller would replace deleted ones), which
  frees their nodes as a delete does.

``--hints``: every pod gets ``spec.activeDeadlineSeconds``, its job's run time rounded up to
the next 10 s (`_job_stream.hint_seconds`). kube-scheduler ignores the field; ``crdkit
scheduler`` reads it as the pod's run-time bound (`crdkit.scheduling.runtime_bounds`), counted
from the pod's ``status.startTime``, so with ``--hints`` the bench also plays the kubelet's
start: once a job's last pod is bound it marks every pod ``Running`` with that moment (rounded
up to the whole second) as ``startTime``. Nothing enforces the deadline here, and the bench
ends each job at its run time, never after its hint. Without ``--hints`` no pod gets either.

Other options: ``--log-dir DIR`` keeps each contestant's log in ``DIR/seed<N>[-hints]/``
(otherwise it goes with the control plane's folder); ``--kube-scheduler-flag`` passes one more
flag to kube-scheduler (both its contestants), e.g. ``--kube-scheduler-flag=-v=5`` to see its
queue move pod groups between backoff and active.

Per contestant and seed: ``hints`` (whether ``--hints`` was on), ``makespan_s`` (submit to the
last job done), ``lower_bound_s`` (GPU-seconds of work over the GPUs), ``lower_bound_ratio``
(makespan over the lower bound), ``gpu_held_pct`` and ``gpu_in_bound_jobs_pct`` (mean
share of the GPUs held by bound pods, and by jobs with every pod bound, from submit until the
last job is bound), ``partly_bound_over_1s`` and ``partly_bound_max_s`` (multi-pod jobs
with some but not all pods bound for more than 1 s, and the longest such window),
``leaf_jobs_in_one_leaf_pct``, ``wait_by_size`` (submit to all bound: p50/p99/max),
``half_idle_while_waiting_max_s`` (the longest stretch with fewer than half the GPUs held
while a job waits, the start included) and ``half_idle_after_start_max_s`` (the same, the
stretch from submit left out), ``deadlock`` (no job bound or done for ``--stall``
seconds while jobs wait), and
``log_warnings`` and ``log_first_warnings`` (how many warnings or errors the contestant
logged, and the first few distinct ones), and ``timeline``: every 5 s, the GPUs held and
those in fully bound jobs (%) and the jobs not yet fully bound. Real time: a run at 256
nodes takes one to two minutes (``kube-gang``'s, about two and a half).

Upstream's gang queue, as read in v1.37.2's ``pkg/scheduler/backend/queue`` and seen in
kube-scheduler's log at ``-v=5``: a pod group the scheduler rejects names no plugin for it
(``unschedulable plugins={}``), so it goes straight back to the backoff queue rather than
waiting for a cluster event, and is tried again only when its backoff ends: 1 s doubling at
each rejection, capped at the pod's 10 s maximum times the square root of the group's pod count
(40 s for 16 pods). A 16-pod gang rejected all through a full cluster is at 32 s by the time
leaves free, and a leaf freed meanwhile stays idle until then. That is kube-scheduler's default
configuration (``podInitialBackoffSeconds`` 1, ``podMaxBackoffSeconds`` 10), kept as it is, like
the ``kube-scheduler`` contestant's profile.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp

from crdkit.client import Client, GroupVersionKind, NotFound
from crdkit.resources import Pod, PodGroup
from crdkit.runtime.informer import Informer
from crdkit.scheduling.gangs import KUEUE_PREFERRED, KUEUE_REQUIRED
from crdkit.scheduling.groups.coscheduling import COSCHEDULING_POD_GROUP_LABEL, CoschedulingPodGroup
from crdkit.scheduling.groups.crds import install_pod_group_crds
from crdkit.testing import ControlPlane
from crdkit.testing.envtest.gates import WORKLOAD_API
from crdkit.testing.envtest.processes import free_ports
from crdkit.testing.sim.nodes import create_nodes, simulated_node

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the examples

from _job_stream import GPUS, LEAF, NAMESPACE, SIZES, hint_seconds, percentile
from _job_stream import Job as StreamJob
from _job_stream import stream as job_stream
from _view_watch import PageReader, PromiseWatch, cpu_seconds

ROOT = Path(__file__).resolve().parents[1]
CRDKIT = "crdkit-gangs"
CONTESTANTS = ("crdkit", "kube-scheduler", "kube-gang", "crdkit-kube", "example")
KUBERNETES_GANGS = ("kube-gang", "crdkit-kube")
"""The contestants given Kubernetes' own PodGroups, on a control plane that serves them."""
HARD_PODS = 8
"""Jobs of this many pods or more require one leaf; smaller ones prefer it (or, on Kubernetes'
PodGroup, which has no preferred mode, ask for no topology)."""
EXAMPLE_JOB = GroupVersionKind("batch.volcano.sh", "v1alpha1", "Job")
EXAMPLE_JOB_LABEL = "volcano.sh/job-name"  # on the pods the example creates
TIMELINE_STEP_S = 5.0


@dataclass
class Job(StreamJob):
    nodes: dict[str, str] = field(default_factory=dict)
    done: float | None = None


def stream(nodes: int, load: float, seed: int) -> list[Job]:
    """The seeded mix (the same draws as queue_sim_bench's, whole-node pods)."""
    return job_stream(Job, nodes, load, seed)


def pod_manifests(job: Job, contestant: str, hints: bool = False) -> list[Pod]:
    """``job``'s pods as ``contestant`` is given them: plain pods for kube-scheduler, joined to
    Kubernetes' PodGroup of the job (`kubernetes_pod_group`) through ``spec.schedulingGroup``
    for kube-gang and crdkit-kube, to the coscheduling PodGroup by label (with Kueue's topology
    annotation) for crdkit. With ``hints``, ``spec.activeDeadlineSeconds`` is the job's
    run-time hint (`hint_seconds`)."""
    gpus = {"nvidia.com/gpu": str(GPUS)}
    resources = {"requests": gpus, "limits": gpus}
    metadata: dict[str, Any] = {"namespace": NAMESPACE, "labels": {"job": job.name}}
    spec: dict[str, Any] = {
        "containers": [{"name": "train", "image": "trainer", "resources": resources}],
        "terminationGracePeriodSeconds": 0,
    }
    if hints:
        spec["activeDeadlineSeconds"] = hint_seconds(job.seconds)
    if contestant == "crdkit":
        metadata["labels"][COSCHEDULING_POD_GROUP_LABEL] = job.name
        hard = job.pods >= HARD_PODS
        metadata["annotations"] = {(KUEUE_REQUIRED if hard else KUEUE_PREFERRED): LEAF}
        spec["schedulerName"] = CRDKIT
    if contestant in KUBERNETES_GANGS:
        spec["schedulingGroup"] = {"podGroupName": job.name}
    if contestant == "crdkit-kube":
        spec["schedulerName"] = CRDKIT
    return [
        Pod.model_validate({"metadata": {**metadata, "name": f"{job.name}-{i}"}, "spec": spec})
        for i in range(job.pods)
    ]


def kubernetes_pod_group(job: Job) -> PodGroup:
    """``job`` as Kubernetes' own PodGroup (``scheduling.k8s.io/v1beta1``): a gang of all its
    pods, in one leaf (the required topology constraint) from `HARD_PODS` pods up; below, a
    gang with no topology, upstream having no preferred mode. Neither it nor its pods name a
    priority class, so the two agree (kube-scheduler refuses a group whose class differs from
    its pods')."""
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": job.pods}}}
    if job.pods >= HARD_PODS:
        spec["schedulingConstraints"] = {"topology": [{"key": LEAF}]}
    return PodGroup.model_validate(
        {"metadata": {"name": job.name, "namespace": NAMESPACE}, "spec": spec}
    )


def example_job(job: Job, hints: bool = False) -> dict[str, Any]:
    """``job`` as the Volcano Job the gang scheduler example reconciles: one task of its pods,
    all needed at once, a leaf required from 8 pods up and preferred below; with ``hints``, its
    pods' ``activeDeadlineSeconds`` is the job's run-time hint."""
    gpus = {"nvidia.com/gpu": str(GPUS)}
    pod_spec: dict[str, Any] = {
        "containers": [
            {
                "name": "train",
                "image": "trainer",
                "resources": {"requests": gpus, "limits": gpus},
            }
        ],
        "terminationGracePeriodSeconds": 0,
    }
    if hints:
        pod_spec["activeDeadlineSeconds"] = hint_seconds(job.seconds)
    template = {"metadata": {"labels": {"job": job.name}}, "spec": pod_spec}
    hard = job.pods >= HARD_PODS
    return {
        "apiVersion": f"{EXAMPLE_JOB.group}/{EXAMPLE_JOB.version}",
        "kind": EXAMPLE_JOB.kind,
        "metadata": {"name": job.name, "namespace": NAMESPACE},
        "spec": {
            "minAvailable": job.pods,
            "schedulerName": "crdkit-gang-scheduler",
            "tasks": [
                {
                    "name": "worker",
                    "replicas": job.pods,
                    "minAvailable": job.pods,
                    "template": template,
                }
            ],
            "networkTopology": {"mode": "hard", "highestTierAllowed": 1}
            if hard
            else {"mode": "soft"},
        },
    }


async def add_nodes(client: Client, count: int) -> dict[str, str]:
    """``count`` Ready 8-GPU nodes, without the not-ready taint no controller lifts here
    (`create_nodes`); node -> leaf."""
    leaves = {f"n{i:05d}": f"l{i // 16:03d}" for i in range(count)}
    await create_nodes(
        client, [simulated_node(name, labels={LEAF: leaf}) for name, leaf in leaves.items()]
    )
    return leaves


def kube_scheduler_binary() -> Path:
    """Builds (or finds up to date) kube-scheduler; its path."""
    script = ROOT / "tools" / "kube-scheduler" / "build.sh"
    done = subprocess.run(["bash", str(script)], check=True, capture_output=True, text=True)
    return Path(done.stdout.strip().splitlines()[-1])


@dataclass
class LogSummary:
    """The warnings a contestant logged: how many, and the first few distinct ones."""

    warnings: int = 0
    first: list[str] = field(default_factory=list)
    cpu_s: float | None = None
    """The contestant's CPU time (user and system), read as it is stopped."""


# klog's warning and error lines (kube-scheduler), and crdkit's JSON log records.
_KLOG_WARNING = re.compile(r"^[WE]\d{4} ")
_JSON_WARNING = re.compile(r'"level": ?"(warning|error|critical)"')


def summarize_log(path: Path, keep: int = 5) -> LogSummary:
    summary = LogSummary()
    seen: set[str] = set()
    with open(path, errors="replace") as lines:
        for line in lines:
            if not (_KLOG_WARNING.match(line) or _JSON_WARNING.search(line)):
                continue
            summary.warnings += 1
            text = line.strip()[:300]
            # One entry per message, whatever the object or time it names.
            shape = re.sub(r"\d+", "N", text)
            if len(summary.first) < keep and shape not in seen:
                seen.add(shape)
                summary.first.append(text)
    return summary


@contextlib.asynccontextmanager
async def process_running(
    command: list[str], log_path: Path, summary: LogSummary
) -> AsyncIterator[None]:
    """``command`` running, its output in ``log_path``; stopped (SIGTERM, then SIGKILL after
    30 s) on the way out, and its warnings counted into ``summary``."""
    log = open(log_path, "wb")  # noqa: ASYNC230, SIM115 - open for the process's lifetime
    process = subprocess.Popen(  # noqa: ASYNC220
        command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT
    )
    try:
        yield
    finally:
        summary.cpu_s = cpu_seconds(process.pid)
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(30)
        process.kill()
        process.wait()
        log.close()
        found = summarize_log(log_path)
        summary.warnings, summary.first = found.warnings, found.first


async def wait_ready(port: int, within: float = 60.0) -> None:
    """Until ``/readyz`` on ``port`` answers 200: the scheduler's caches are synced."""
    deadline = time.monotonic() + within
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            with contextlib.suppress(aiohttp.ClientError):
                async with session.get(f"http://127.0.0.1:{port}/readyz") as answer:
                    if answer.status == 200:
                        return
            await asyncio.sleep(0.1)
    raise SystemExit(f"crdkit scheduler: not ready within {within} s")


@contextlib.asynccontextmanager
async def contestant_running(
    name: str,
    plane: ControlPlane,
    client: Client,
    policy: str,
    flags: list[str],
    summary: LogSummary,
    log_dir: Path | None = None,
    kube_flags: list[str] | None = None,
) -> AsyncIterator[None]:
    """The contestant as its users run it: a process of its own beside the control plane; its
    log in ``log_dir`` if given, else in the control plane's folder (deleted with it)."""
    logs = log_dir or plane.workdir
    if name in ("kube-scheduler", "kube-gang"):
        command = [
            str(kube_scheduler_binary()),
            f"--kubeconfig={plane.kubeconfig_path}",
            "--leader-elect=false",
            "--secure-port=0",
            "-v=1",
        ]
        if name == "kube-gang":
            command.append(kube_scheduler_gates())
        command.extend(kube_flags or [])
        async with process_running(command, logs / f"{name}.log", summary):
            yield
        return
    if name == "example":
        from examples.gang_scheduler.cluster_setup import install_crds

        await install_crds(client)
        (port,) = free_ports(1)
        command = [
            sys.executable,
            "-m",
            "examples.gang_scheduler",
            f"--kubeconfig={plane.kubeconfig_path}",
            f"--namespace={NAMESPACE}",
            f"--tier-label={LEAF}",
            "--metrics-bind-address=0",
            f"--health-probe-bind-address=127.0.0.1:{port}",
        ]
        async with process_running(command, logs / "example.log", summary):
            await wait_ready(port)
            yield
        return
    api = "kubernetes" if name == "crdkit-kube" else "coscheduling"
    if api == "coscheduling":
        await install_pod_group_crds(client, [api])
    (port,) = free_ports(1)
    command = [
        sys.executable,
        "-c",
        "from crdkit.cli import main; main()",
        "scheduler",
        f"--name={CRDKIT}",
        f"--levels={LEAF}",
        f"--pod-groups={api}",
        f"--policy={policy}",
        f"--kubeconfig={plane.kubeconfig_path}",
        "--metrics-bind-address=0",
        f"--health-probe-bind-address=127.0.0.1:{port}",
        "--log-level=warning",
    ]
    command.extend(flags)
    async with process_running(command, logs / f"{name}-scheduler.log", summary):
        await wait_ready(port)
        yield


def kube_scheduler_gates() -> str:
    """kube-scheduler's ``--feature-gates`` for gangs: the apiserver's (`WORKLOAD_API`),
    ``GenericWorkload`` (the PodGroup, pods' ``schedulingGroup``, the gang plugin) and
    ``TopologyAwareWorkloadScheduling`` (the group's ``schedulingConstraints``)."""
    gates = ",".join(f"{k}={str(v).lower()}" for k, v in WORKLOAD_API.feature_gates.items())
    return f"--feature-gates={gates}"


async def run(
    contestant: str,
    nodes: int,
    jobs: list[Job],
    policy: str,
    stall: float,
    flags: list[str] | None = None,
    hints: bool = False,
    log_dir: Path | None = None,
    kube_flags: list[str] | None = None,
    ui_page: bool = False,
    ui_port: int | None = None,
) -> dict[str, Any]:
    gated = contestant in KUBERNETES_GANGS
    ours = contestant in ("crdkit", "crdkit-kube")
    flags = list(flags or [])
    page: PageReader | None = None
    if ours and ui_page:  # one page open on the scheduler's --ui all through the run
        ui_port = ui_port or free_ports(1)[0]
        flags += ["--ui", f"--ui-bind-address=127.0.0.1:{ui_port}"]
        page = PageReader(f"http://127.0.0.1:{ui_port}/events")
    async with (
        ControlPlane(workload_api=gated) as plane,
        Client.from_control_plane(plane) as client,
    ):
        await plane.create_namespace(NAMESPACE)
        leaves = await add_nodes(client, nodes)
        by_pod = {f"{job.name}-{i}": job for job in jobs for i in range(job.pods)}
        held: list[tuple[float, int, int]] = []  # (time, GPUs bound +/-, GPUs in whole jobs +/-)
        summary = LogSummary()
        progress = [time.monotonic()]
        finished = asyncio.Event()
        pending_deletes: set[asyncio.Task[None]] = set()

        by_job = {job.name: job for job in jobs}

        async def start(pod: str) -> None:
            # As a kubelet would say it: Running since the start its bound counts from, the
            # moment the job's last pod was bound, rounded up to metav1.Time's whole second
            # (so start + hint never falls before the bench ends the pod).
            since = datetime.fromtimestamp(math.ceil(time.time()), UTC)
            with contextlib.suppress(NotFound):
                await client.patch(
                    Pod,
                    pod,
                    {"status": {"phase": "Running", "startTime": since.isoformat()[:19] + "Z"}},
                    namespace=NAMESPACE,
                    subresource="status",
                )

        async def finish(job: Job) -> None:
            if hints:
                await asyncio.gather(*(start(pod) for pod in job.nodes))
            ends = (job.all_bound or time.monotonic()) + job.seconds
            await asyncio.sleep(max(0.0, ends - time.monotonic()))
            for pod in job.nodes:
                with contextlib.suppress(NotFound):
                    if contestant == "example":  # its Job controller would replace a deleted pod
                        await client.patch(
                            Pod,
                            pod,
                            {"status": {"phase": "Succeeded"}},
                            namespace=NAMESPACE,
                            subresource="status",
                        )
                    else:
                        await client.delete(Pod, pod, namespace=NAMESPACE, grace_period_seconds=0)
            if gated:  # its PodGroup goes with it, as a job controller's would
                with contextlib.suppress(NotFound):
                    await client.delete(PodGroup, job.name, namespace=NAMESPACE)
            now = time.monotonic()
            job.done = now
            progress[0] = now
            held.append((now, -job.pods * GPUS, -job.pods * GPUS))
            if all(j.done is not None for j in jobs):
                finished.set()

        def seen(pod: Pod) -> None:
            name, node = pod.metadata.name or "", pod.spec.node_name
            job = by_pod.get(name) or by_job.get(pod.metadata.labels.get(EXAMPLE_JOB_LABEL, ""))
            if job is None or not node or name in job.bound:
                return
            now = time.monotonic()
            job.bound.add(name)
            job.nodes[name] = node
            progress[0] = now
            held.append((now, GPUS, 0))
            if job.first_bound is None:
                job.first_bound = now
            if len(job.bound) == job.pods:
                job.all_bound = now
                held.append((now, 0, job.pods * GPUS))
                task = asyncio.create_task(finish(job))
                pending_deletes.add(task)
                task.add_done_callback(pending_deletes.discard)

        informer = Informer(client, Pod, namespace=NAMESPACE)
        informer.add_event_handler(seen, lambda _old, new: seen(new))
        promises = PromiseWatch(client, CRDKIT)
        async with (
            informer,
            promises.watching(),
            contestant_running(
                contestant, plane, client, policy, flags, summary, log_dir, kube_flags
            ),
        ):
            await informer.wait_for_sync(60)
            reading = None if page is None else asyncio.create_task(page.read())
            gate = asyncio.Semaphore(32)

            async def create(obj: Any) -> None:
                async with gate:
                    await client.create(obj)

            submitted = time.monotonic()
            if contestant == "crdkit":
                groups = [
                    CoschedulingPodGroup.model_validate(
                        {
                            "metadata": {"name": job.name, "namespace": NAMESPACE},
                            "spec": {"minMember": job.pods},
                        }
                    )
                    for job in jobs
                ]
                await asyncio.gather(*(create(g) for g in groups))
            if gated:  # every PodGroup before its pods
                await asyncio.gather(*(create(kubernetes_pod_group(job)) for job in jobs))
            if contestant == "example":
                await asyncio.gather(*(create(example_job(job, hints)) for job in jobs))
            else:
                pods = [pod for job in jobs for pod in pod_manifests(job, contestant, hints)]
                await asyncio.gather(*(create(p) for p in pods))
            deadlock = False
            while not finished.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(finished.wait(), 1.0)
                if time.monotonic() - progress[0] > stall:
                    deadlock = True
                    break
            for task in list(pending_deletes):
                task.cancel()
            if reading is not None:
                reading.cancel()
                await asyncio.gather(reading, return_exceptions=True)
    result = figures(contestant, nodes, jobs, leaves, held, submitted, deadlock)
    if ours:
        result |= {"promises": promises.figures()}
    if page is not None:
        result |= {"page": page.figures()}
    return {
        **result,
        "hints": hints,
        "cpu_s": summary.cpu_s,
        "log_warnings": summary.warnings,
        "log_first_warnings": summary.first,
    }


def figures(
    contestant: str,
    nodes: int,
    jobs: list[Job],
    leaves: dict[str, str],
    held: list[tuple[float, int, int]],
    submitted: float,
    deadlock: bool,
) -> dict[str, Any]:
    bound_times = [j.all_bound for j in jobs if j.all_bound is not None]
    window_end = max(bound_times) if bound_times else submitted
    area_held = area_whole = 0.0
    gpus_held = gpus_whole = 0
    last = submitted
    for at, delta_held, delta_whole in sorted(held):
        if at > window_end:
            break
        area_held += gpus_held * (at - last)
        area_whole += gpus_whole * (at - last)
        gpus_held += delta_held
        gpus_whole += delta_whole
        last = at
    window = max(window_end - submitted, 1e-9)
    capacity = nodes * GPUS
    multi = [j for j in jobs if j.pods > 1 and j.all_bound is not None]
    partly = [(j.all_bound or 0.0) - (j.first_bound or 0.0) for j in multi]
    leaf_jobs = [j for j in jobs if j.pods >= 8 and j.all_bound is not None]
    in_one = sum(len({leaves[n] for n in j.nodes.values()}) == 1 for j in leaf_jobs)
    waits: dict[str, dict[str, float]] = {}
    for size in SIZES:
        values = [(j.all_bound or 0.0) - submitted for j in jobs if j.pods == size and j.all_bound]
        waits[str(size)] = {
            "p50_s": round(percentile(values, 0.5), 1),
            "p99_s": round(percentile(values, 0.99), 1),
            "max_s": round(max(values, default=0.0), 1),
        }
    done = [j.done for j in jobs if j.done is not None]
    work = sum(j.pods * GPUS * j.seconds for j in jobs)
    makespan = round(max(done) - submitted, 1) if done and not deadlock else None
    lower_bound = round(work / capacity, 1)
    half_idle = half_idle_stretch(held, jobs, submitted, capacity)
    half_idle_later = half_idle_stretch(held, jobs, submitted, capacity, after_start=True)
    timeline = sampled(held, jobs, submitted, max(done, default=submitted), capacity)
    return {
        "contestant": contestant,
        "jobs": len(jobs),
        "pods": sum(j.pods for j in jobs),
        "makespan_s": makespan,
        "lower_bound_s": lower_bound,
        "lower_bound_ratio": (
            round(makespan / lower_bound, 3) if makespan is not None and lower_bound else None
        ),
        "gpu_held_pct": round(100 * area_held / window / capacity, 1),
        "gpu_in_bound_jobs_pct": round(100 * area_whole / window / capacity, 1),
        "partly_bound_over_1s": sum(p > 1.0 for p in partly),
        "multi_pod_jobs": len(multi),
        "partly_bound_max_s": round(max(partly, default=0.0), 2),
        "leaf_jobs_in_one_leaf_pct": (
            round(100 * in_one / len(leaf_jobs), 1) if leaf_jobs else None
        ),
        "wait_by_size": waits,
        "half_idle_while_waiting_max_s": round(half_idle, 2),
        "half_idle_after_start_max_s": round(half_idle_later, 2),
        "jobs_done": len(done),
        "deadlock": deadlock,
        "timeline": timeline,
    }


def half_idle_stretch(
    held: list[tuple[float, int, int]],
    jobs: list[Job],
    submitted: float,
    capacity: int,
    *,
    after_start: bool = False,
) -> float:
    """The longest stretch in which fewer than half the GPUs were held by bound pods while
    some job was not yet fully bound (every pod here fills a node, so a waiting single-pod
    job fits any of those free nodes; a waiting gang that requires a leaf may not). With
    ``after_start``, the stretch from submit (while the stream's pods are still being
    created) is left out."""
    events = [(at, delta, 0) for at, delta, _ in held]
    events += [(j.all_bound, 0, -1) for j in jobs if j.all_bound is not None]
    waiting, gpus, longest = len(jobs), 0, 0.0
    since: float | None = submitted  # at submit nothing is held and every job waits
    for at, delta, bound in sorted(events):
        gpus += delta
        waiting += bound
        idle = 2 * gpus < capacity and waiting > 0
        if idle and since is None:
            since = at
        elif not idle and since is not None:
            if not (after_start and since == submitted):
                longest = max(longest, at - since)
            since = None
    return longest


def sampled(
    held: list[tuple[float, int, int]],
    jobs: list[Job],
    submitted: float,
    end: float,
    capacity: int,
    step: float = TIMELINE_STEP_S,
) -> list[list[float]]:
    """Every ``step`` seconds from submit to the last job done: ``[t, GPUs held %, GPUs in
    fully bound jobs %, jobs not yet fully bound]``, to see when GPUs sat idle while jobs
    waited."""
    changes = sorted(held)
    bound_at = sorted(j.all_bound for j in jobs if j.all_bound is not None)
    rows: list[list[float]] = []
    gpus_held = gpus_whole = index = bound = 0
    at = submitted
    while at <= end + step:
        while index < len(changes) and changes[index][0] <= at:
            gpus_held += changes[index][1]
            gpus_whole += changes[index][2]
            index += 1
        while bound < len(bound_at) and bound_at[bound] <= at:
            bound += 1
        rows.append(
            [
                round(at - submitted, 1),
                round(100 * gpus_held / capacity, 1),
                round(100 * gpus_whole / capacity, 1),
                len(jobs) - bound,
            ]
        )
        at += step
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=256)
    parser.add_argument("--seeds", default="7,8,9")
    parser.add_argument("--load", type=float, default=1.9, help="pods' GPUs over the cluster's")
    parser.add_argument("--contestants", default="crdkit,kube-scheduler")
    parser.add_argument("--policy", default="best-fit", help="crdkit's placer policy")
    parser.add_argument("--stall", type=float, default=120.0, help="seconds without progress")
    parser.add_argument(
        "--settle-seconds",
        type=float,
        default=None,
        help="crdkit scheduler's --settle-seconds (default: its own default)",
    )
    parser.add_argument(
        "--scheduler-flag",
        action="append",
        default=[],
        help="one more flag for crdkit scheduler, e.g. --scheduler-flag=--size-credit=0 "
        "(repeatable)",
    )
    parser.add_argument(
        "--kube-scheduler-flag",
        action="append",
        default=[],
        help="one more flag for kube-scheduler (both its contestants), e.g. "
        "--kube-scheduler-flag=-v=2 to log why a pod group waits (repeatable)",
    )
    parser.add_argument(
        "--time-scale", type=float, default=1.0, help="multiplies every job's run time"
    )
    parser.add_argument(
        "--hints",
        action="store_true",
        help="every pod's spec.activeDeadlineSeconds is its job's run time rounded up to the "
        "next 10 s (crdkit scheduler reads it as a run-time bound; kube-scheduler ignores it)",
    )
    parser.add_argument(
        "--ui-page",
        action="store_true",
        help="run crdkit scheduler with --ui and keep one page's update stream open all "
        "through the run (its sizes are reported; compare cpu_s with a run without)",
    )
    parser.add_argument(
        "--ui-port",
        type=int,
        default=None,
        help="with --ui-page, serve the page on this port (to open it in a browser during the "
        "run; default: any free port)",
    )
    parser.add_argument(
        "--log-dir",
        type=Path,
        default=None,
        help="keep each contestant's log in DIR/seed<N>[-hints]/ (default: deleted with the "
        "run's control plane)",
    )
    args = parser.parse_args(argv)
    flags = list(args.scheduler_flag)
    if args.settle_seconds is not None:
        flags.append(f"--settle-seconds={args.settle_seconds}")
    if args.nodes < 16 or args.nodes % 16:
        parser.error("--nodes: a positive multiple of 16 (whole leaves)")
    contestants = [c.strip() for c in args.contestants.split(",") if c.strip()]
    for contestant in contestants:
        if contestant not in CONTESTANTS:
            parser.error(f"--contestants: unknown contestant {contestant!r}")
    started = time.monotonic()
    runs = []
    for seed in (int(s) for s in args.seeds.split(",")):
        for contestant in contestants:
            jobs = stream(args.nodes, args.load, seed)
            for job in jobs:
                job.seconds *= args.time_scale
            log_dir = None
            if args.log_dir is not None:
                log_dir = args.log_dir / f"seed{seed}{'-hints' if args.hints else ''}"
                log_dir.mkdir(parents=True, exist_ok=True)
            result = asyncio.run(
                run(
                    contestant,
                    args.nodes,
                    jobs,
                    args.policy,
                    args.stall,
                    flags,
                    hints=args.hints,
                    log_dir=log_dir,
                    kube_flags=args.kube_scheduler_flag,
                    ui_page=args.ui_page,
                    ui_port=args.ui_port,
                )
            )
            runs.append({"seed": seed, "nodes": args.nodes, **result})
            print(json.dumps(runs[-1]), file=sys.stderr)
    print(
        json.dumps(
            {
                "bench": "scheduler_compare",
                "load": args.load,
                "policy": args.policy,
                "settle_seconds": args.settle_seconds,
                "scheduler_flags": args.scheduler_flag,
                "kube_scheduler_flags": args.kube_scheduler_flag,
                "time_scale": args.time_scale,
                "hints": args.hints,
                "ui_page": args.ui_page,
                "runs": runs,
                "seconds": round(time.monotonic() - started),
                "cpus": os.cpu_count(),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
