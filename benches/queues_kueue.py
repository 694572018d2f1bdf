"""Kueue's live run of the queues benchmark's stream (`_queue_stream`), judged by its figures.

    python benches/queues_kueue.py --nodes 32 --seeds 7
    python benches/queues_kueue.py --nodes 256 --seeds 7,8,9 --json

Without ``--json`` it prints one line of figures per seed; with it, one JSON object (the
figures of every seed under ``runs``). ``--workdir DIR`` keeps each seed's Kueue and
kube-scheduler logs in ``DIR/seed<N>`` (default: a folder under /tmp, named in the JSON).

`benches/queues_bench.py` calls `run_kueue` for its Kueue contestant (``--live``, beside
crdkit's live run of the same stream); this ``main`` runs it alone and judges it with
`_queue_stream`'s figures. What both live runs share (the control plane, the nodes, the
simulated kubelets, submission, job ends and eviction bookkeeping) is `_queues_live`'s; what is
Kueue's is `KueueStream`.

What runs: a fresh local control plane (kube-apiserver and etcd from `tools/envtest`) with
``--nodes`` simulated 8-GPU nodes in leaves of 16 (`crdkit.testing.create_gpu_cluster`),
their kubelets played by `crdkit.testing.SimulatedKubelet`; Kueue v0.17.0 built unmodified
from the Go module proxy (`tools/kueue-controller/build.sh`), started as
`tests/integration/recipes/test_kueue.py` starts it (its pod webhook called by the local
apiserver over a self-signed certificate; the recipe's configuration with fair sharing on and
the client rate limits and controller concurrency of Kueue's own install manifests); and
kube-scheduler (`tools/kube-scheduler/build.sh`, the same one `scheduler_compare.py` runs)
binding the pods Kueue ungates. Nothing of crdkit's schedules here.

Kueue's objects for the stream (`queue_objects`): one ResourceFlavor ``gpu`` (every node, by its
GPU model label, which Kueue requires of a flavor with a topology), whose
``topologyName`` is a Topology of the leaf label and the hostname (topology-aware scheduling:
Kueue picks each admitted pod's node and writes it as a node selector); a Cohort ``org`` with a
quarter of the GPUs as its own nominal quota; one ClusterQueue per team in it, each with a
quarter of the GPUs, ``fairSharing.weight`` 1, 1 and 2, and preemption ``reclaimWithinCohort:
Any`` and ``withinClusterQueue: LowerPriority``; one LocalQueue per team, named after it, in
the jobs' namespace. Kueue's configuration turns fair sharing on (``fairSharing`` with
preemption strategies ``LessThanOrEqualToFinalShare, LessThanInitialShare``, the v1beta2
configuration having no ``enable`` field: its presence is what turns it on). Every job is a
Kueue pod group (`pod_manifests`): its pods name the team's LocalQueue and the group, carry the
group's total count, ask for 8 GPUs each, and from 8 pods up require one leaf
(``kueue.x-k8s.io/podset-required-topology``), below prefer one
(``podset-preferred-topology``), as `scheduler_compare.py`'s contestants are asked.

The run: team-a's and team-b's jobs are created at the start, team-c's `RECLAIM_AT_S` seconds
later; a job's ``arrived`` is the moment its pods were submitted. Once all of a job's pods are
bound the simulated kubelets report them Running, and the job's run time later this bench
reports them ``Succeeded`` (a kubelet's report: Kueue then marks the Workload finished and
frees its quota). Times are ``time.monotonic()`` seconds.

Preemption: when Kueue preempts a pod group it marks its pods and deletes them; its finalizer
keeps them until they have ended, and Kueue does not create pods again (a pod group's pods are
the user's). So this bench plays both missing parts: the kubelet, which reports a deleted
running pod ``Failed``, and the job's owner, which creates the group's pods again under new
names (``<job>-r<attempt>-<i>``) with the same group label once the old ones are Failed or
gone. They are Kueue's replacement pods for the same Workload, which Kueue re-queued when it
evicted it. Pods Kueue left (it does not delete a group's pods that are still gated) stay and
are not replaced: the group never has more pods than its count, which Kueue would trim. The
job's ``all_bound`` and ``ended`` are those of the attempt that ran whole (its ``arrived``
stays its first submit); the GPU-seconds the evicted attempts held are ``evicted_gpu_s``, and
each eviction is counted with the reason Kueue wrote on the pod.

Figures per seed (see `_queue_stream`): ``shares`` (each team's share of the GPU-seconds held
by whole jobs in the saturated window, from team-c's submit to the first time a team has no
job left waiting) beside ``fair_shares``, and ``share_error_pts`` (the largest gap, in points);
``useful_gpu_pct`` (the mean share of the cluster's GPUs held by whole jobs in that window);
``reclaim_s`` (team-c's gangs that arrived under its nominal quota: arrival to all pods bound,
p50 and max, seconds); ``admitted_not_placeable`` (attempts Kueue admitted, every gate
removed, whose pods then stayed unbound more than `STUCK_S` seconds or were reported
unschedulable by kube-scheduler); ``evictions`` and ``evicted_gpu_s`` per team,
``eviction_reasons`` (``WorkloadEvictedDueToPreempted`` for Kueue's preemptions) and
``attempts`` (pod groups created, first ones and replacements); ``jobs_done``,
``makespan_s`` (the start to the last job's end), ``window_s`` (the saturated window, from the
start); ``versions`` (Kueue's module version as linked, kube-scheduler's), ``errors`` and the
warnings each peer logged.

The saturated window ends when the first team has nothing left waiting, so at a low ``--load``
it is short and mostly the reclaim transient (about 26 s at 256 nodes and load 1.0); the
default ``--load 2.0`` gives minutes of all three teams competing (about 144 s).

``--no-tas`` is the fallback if Kueue's topology-aware scheduling does not work on a control
plane: the flavor gets no topology, the pods no topology annotation, and kube-scheduler places
the pods of each admitted group wherever they fit.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from crdkit.client import GroupVersionKind, KubernetesError
from crdkit.testing import ControlPlane, GpuClusterShape
from crdkit.testing.envtest.processes import free_ports
from crdkit.testing.sim.gpu_cluster import GPU_PRODUCT_LABEL
from crdkit.webhook import write_self_signed

sys.path.insert(0, str(Path(__file__).resolve().parent))

import go_peer
from _job_stream import GPUS, LEAF, NAMESPACE, percentile
from _queue_stream import (
    COHORT,
    RECLAIM_AT_S,
    TEAMS,
    TeamJob,
    fair_shares,
    gpu_time_shares,
    nominal_gpus,
    queue_stream,
    reclaim_latencies,
    saturated_window,
    spans,
    useful_gpu_pct,
)
from _queues_live import (
    STUCK_S,
    Attempt,
    LiveRun,
    LiveStream,
    eviction_reasons,
    listening,
    pod_name,
    until,
)
from scheduler_compare import HARD_PODS, LogSummary, kube_scheduler_binary, process_running

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "tools" / "kueue-controller" / "build.sh"
RECIPE = ROOT / "docs" / "guides" / "recipes" / "kueue"
"""The recipe's Kueue configuration and pod webhook, which this run starts from."""
KUEUE_MODULE = "sigs.k8s.io/kueue"
METRICS_CERT_DIR = Path("/etc/kueue/metrics/certs")
"""Where Kueue v0.17.0 reads its metrics certificate when its own certificate management is
off; it exits at start without one (see docs/guides/recipes/kueue.md, step 4)."""

CRDS = Path("config/components/crd/bases")
SHIPPED_CONFIG = Path("config/components/manager/controller_manager_config.yaml")
KUEUE_API = "kueue.x-k8s.io/v1beta2"
CLUSTER_QUEUE = GroupVersionKind("kueue.x-k8s.io", "v1beta2", "ClusterQueue")
FLAVOR = "gpu"
TOPOLOGY = "leaf-hostname"
HOSTNAME = "kubernetes.io/hostname"
GPU = "nvidia.com/gpu"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
TOTAL_COUNT = "kueue.x-k8s.io/pod-group-total-count"
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
FAIR_SHARING = {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}
"""Kueue's default strategies (as v1beta1 defaulted them): preempt only while the preemptor's
share stays at most the target's after the preemption, then while it is below the target's."""
SETTLE_S = 1.0
"""How long after the first of an evicted group's pods is deleted the bench looks at which of
them Kueue ended (it deletes them one by one)."""
REPLACE_WAIT_S = 30.0
"""How long an evicted attempt's pods may take to be reported Failed or gone before the
replacements are created anyway (with an error recorded)."""


# -- what Kueue is given --------------------------------------------------------------------


def queue_objects(nodes: int, *, tas: bool = True) -> list[dict[str, Any]]:
    """Kueue's objects for the stream's quotas, in creation order: the Topology (with ``tas``),
    the ResourceFlavor, the Cohort with the last quarter of the GPUs, one ClusterQueue per team
    with a quarter each and the team's fair-sharing weight, and one LocalQueue per team in the
    jobs' namespace. The cohort's and the queues' nominal quotas add up to the cluster."""
    quarter = nominal_gpus(nodes)

    def groups(gpus: int) -> list[dict[str, Any]]:
        return [
            {
                "coveredResources": [GPU],
                "flavors": [{"name": FLAVOR, "resources": [{"name": GPU, "nominalQuota": gpus}]}],
            }
        ]

    flavor: dict[str, Any] = {"apiVersion": KUEUE_API, "kind": "ResourceFlavor"}
    flavor["metadata"] = {"name": FLAVOR}
    # Kueue requires node labels of a flavor with a topology: the GPU model every node has.
    flavor["spec"] = {"nodeLabels": {GPU_PRODUCT_LABEL: GpuClusterShape().gpu_product}}
    if tas:
        flavor["spec"]["topologyName"] = TOPOLOGY
    objects: list[dict[str, Any]] = []
    if tas:
        # Kueue requires the hostname, if present, at the lowest level: with it Kueue names each
        # pod's node, and kube-scheduler only binds.
        levels = [{"nodeLabel": LEAF}, {"nodeLabel": HOSTNAME}]
        objects.append(
            {
                "apiVersion": KUEUE_API,
                "kind": "Topology",
                "metadata": {"name": TOPOLOGY},
                "spec": {"levels": levels},
            }
        )
    objects.append(flavor)
    objects.append(
        {
            "apiVersion": KUEUE_API,
            "kind": "Cohort",
            "metadata": {"name": COHORT},
            "spec": {"resourceGroups": groups(quarter)},
        }
    )
    for team in TEAMS:
        objects.append(
            {
                "apiVersion": KUEUE_API,
                "kind": "ClusterQueue",
                "metadata": {"name": team.name},
                "spec": {
                    "cohortName": COHORT,
                    "namespaceSelector": {},
                    "resourceGroups": groups(quarter),
                    "fairSharing": {"weight": str(team.weight)},
                    "preemption": {
                        "reclaimWithinCohort": "Any",
                        "withinClusterQueue": "LowerPriority",
                    },
                },
            }
        )
    for team in TEAMS:
        objects.append(
            {
                "apiVersion": KUEUE_API,
                "kind": "LocalQueue",
                "metadata": {"name": team.name, "namespace": NAMESPACE},
                "spec": {"clusterQueue": team.name},
            }
        )
    return objects


def pod_manifests(
    job: TeamJob, attempt: int = 0, *, tas: bool = True, indices: Iterable[int] | None = None
) -> list[dict[str, Any]]:
    """``job``'s pods for one attempt (those of ``indices``, default all): one Kueue pod group
    named after the job (replacements join the same group, hence the same Workload), queued in
    the team's LocalQueue, each pod asking for 8 GPUs; with ``tas``, a leaf required from
    `HARD_PODS` pods up and preferred below."""
    gpus = {GPU: str(job.gpus)}
    annotations = {TOTAL_COUNT: str(job.pods)}
    if tas:
        annotations[REQUIRED_TOPOLOGY if job.pods >= HARD_PODS else PREFERRED_TOPOLOGY] = LEAF
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": pod_name(job, attempt, i),
                "namespace": NAMESPACE,
                "labels": {QUEUE_LABEL: job.team, GROUP_LABEL: job.name, "job": job.name},
                "annotations": dict(annotations),
            },
            "spec": {
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 0,
                "containers": [
                    {
                        "name": "train",
                        "image": "trainer",
                        "resources": {"requests": gpus, "limits": gpus},
                    }
                ],
            },
        }
        for i in (range(job.pods) if indices is None else indices)
    ]


def kueue_configuration(
    webhook_port: int, cert_dir: Path, shipped: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The recipe's Kueue configuration (docs/guides/recipes/kueue/kueue-config.yaml: pod
    integration only, its own certificates off, no metrics or probe ports) on ``webhook_port``
    with the certificates of ``cert_dir``, fair sharing on, and the client rate limits and
    controller concurrency of ``shipped`` (the configuration Kueue's own install manifests
    deploy, `SHIPPED_CONFIG`: 50 requests a second, where the code's default is 20) so that
    Kueue runs as installed."""
    config: dict[str, Any] = yaml.safe_load((RECIPE / "kueue-config.yaml").read_text())
    config["webhook"] |= {"port": webhook_port, "certDir": str(cert_dir)}
    config["fairSharing"] = FAIR_SHARING
    for key in ("clientConnection", "controller"):
        if shipped and key in shipped:
            config[key] = shipped[key]
    return config


def pod_webhook(webhook_port: int, ca_bundle: bytes) -> dict[str, Any]:
    """The recipe's MutatingWebhookConfiguration for Kueue's pod webhook (the one that gates
    queued pods), pointed at ``webhook_port`` and trusting ``ca_bundle``."""
    webhooks: dict[str, Any] = yaml.safe_load((RECIPE / "kueue-webhook.yaml").read_text())
    for hook in webhooks["webhooks"]:
        url = hook["clientConfig"]["url"]
        host, _, path = url.removeprefix("https://").partition("/")
        hook["clientConfig"]["url"] = f"https://{host.split(':')[0]}:{webhook_port}/{path}"
        hook["clientConfig"]["caBundle"] = base64.b64encode(ca_bundle).decode()
    return webhooks


# -- what the run records ---------------------------------------------------------------------


def not_placeable(attempts: list[Attempt], end: float, stuck_s: float = STUCK_S) -> int:
    """How many ``attempts`` Kueue admitted (every gate gone) that kube-scheduler then could
    not place: reported unschedulable, or not all bound within ``stuck_s`` seconds (until
    bound, evicted or ``end``)."""
    count = 0
    for attempt in attempts:
        if attempt.all_ungated is None:
            continue
        until = attempt.all_bound or attempt.evicted or end
        if attempt.unschedulable or until - attempt.all_ungated > stuck_s:
            count += 1
    return count


def kueue_versions(binary: Path) -> dict[str, Any]:
    """Kueue's module version as linked into ``binary`` (``go version -m``), its Go, and the
    k8s.io/api it was built against; ``error`` when Go cannot read it."""
    info: dict[str, Any] = {"binary": str(binary)}
    try:
        done = subprocess.run(
            [go_binary(), "version", "-m", str(binary)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return {**info, "error": f"go version -m {binary}: {error}"}
    lines = [line.split("\t") for line in done.stdout.splitlines()]
    info["go"] = done.stdout.split(":", 1)[1].split()[0] if ":" in done.stdout else None
    for parts in lines:
        if len(parts) >= 4 and parts[1] in ("mod", "dep") and parts[2] == KUEUE_MODULE:
            info["kueue"] = parts[3]
        if len(parts) >= 4 and parts[1] == "dep" and parts[2] == "k8s.io/api":
            info["k8s.io/api"] = parts[3]
    return info


def go_binary() -> str:
    """The Go the peers are built with (the search of tools/go-toolchain.sh)."""
    found = os.environ.get("GO") or shutil.which("go")
    return found or "/usr/local/go/bin/go"


def kueue_module() -> Path:
    """Kueue's module folder in Go's module cache, at the version tools/kueue-controller/go.mod
    pins: its CRDs (`CRDS`) and its install's configuration (`SHIPPED_CONFIG`) are there."""
    done = subprocess.run(
        [go_binary(), "mod", "download", "-json", KUEUE_MODULE],
        cwd=BUILD.parent,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
        env={**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"},
    )
    return Path(json.loads(done.stdout)["Dir"])


# -- the live run -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Peers:
    """What a live run starts, ready: the binaries, Kueue's CRDs, its configuration file (on
    ``webhook_port``) and the CA its webhook's certificate is signed by."""

    kueue: Path
    scheduler: Path
    crds: Path
    config_file: Path
    webhook_port: int
    ca_bundle: bytes


def prepare(run: LiveRun, workdir: Path) -> Peers | None:
    """Build (or find up to date) Kueue and kube-scheduler, find Kueue's CRDs, write the
    certificates and Kueue's configuration into ``workdir``; their versions into
    ``run.versions``. None, with the reason in ``run.errors``, when a peer is missing: the
    bench goes on without it."""
    workdir.mkdir(parents=True, exist_ok=True)
    binary, why = go_peer.build(BUILD, "Kueue")
    if binary is None:
        run.errors.append(why or "Kueue was not built")
        return None
    run.versions["kueue"] = kueue_versions(binary)
    try:
        scheduler = kube_scheduler_binary()
        module = kueue_module()
        done = subprocess.run(
            [str(scheduler), "--version"], capture_output=True, text=True, timeout=60, check=True
        )
    except (OSError, subprocess.SubprocessError) as error:
        run.errors.append(f"kube-scheduler or Kueue's CRDs: {error}")
        return None
    run.versions["kube-scheduler"] = {"binary": str(scheduler), "version": done.stdout.strip()}
    [webhook_port] = free_ports(1)
    certs = workdir / "certs"
    ca_bundle = write_self_signed(certs, ["127.0.0.1"])
    METRICS_CERT_DIR.mkdir(parents=True, exist_ok=True)
    for name in ("tls.crt", "tls.key"):
        shutil.copyfile(certs / name, METRICS_CERT_DIR / name)
    config_file = workdir / "kueue-config.yaml"
    shipped = yaml.safe_load((module / SHIPPED_CONFIG).read_text())
    config_file.write_text(yaml.safe_dump(kueue_configuration(webhook_port, certs, shipped)))
    return Peers(binary, scheduler, module / CRDS, config_file, webhook_port, ca_bundle)


async def run_kueue(
    nodes: int,
    seed: int,
    load: float,
    *,
    workdir: Path,
    timeout_s: float,
    tas: bool = True,
    time_scale: float = 1.0,
) -> LiveRun:
    """Kueue's live run of the seed's stream (see the module docstring), its logs in
    ``workdir``. Never raises for Kueue's sake: a peer that cannot be built or started, or a
    run that does not finish within ``timeout_s`` seconds of its start, is reported in
    ``errors`` with whatever was measured. ``time_scale`` multiplies every job's run time
    (for quick tests)."""
    jobs = queue_stream(nodes, load, seed)
    for job in jobs:
        job.seconds *= time_scale
    run = LiveRun("kueue", nodes, seed, load, tas, jobs)
    peers = await asyncio.to_thread(prepare, run, workdir)
    if peers is None:
        return run
    try:
        await KueueStream(run, peers, workdir, timeout_s).run()
    except (TimeoutError, OSError, RuntimeError, KubernetesError) as error:
        run.errors.append(f"{type(error).__name__}: {error}")
    return run


class KueueStream(LiveStream):
    """Kueue's part of a live run (`_queues_live.LiveStream`): its CRDs, Kueue and
    kube-scheduler as processes of their own, its queues, a job as one Kueue pod group, and the
    replacement of a preempted group's pods (see the module docstring)."""

    def __init__(self, run: LiveRun, peers: Peers, workdir: Path, timeout_s: float) -> None:
        super().__init__(run, workdir, timeout_s)
        self.peers = peers
        self.summaries = {"kueue": LogSummary(), "kube-scheduler": LogSummary()}

    async def install(self, plane: ControlPlane) -> None:
        await plane.install_crds([self.peers.crds])

    @contextlib.asynccontextmanager
    async def running(self, plane: ControlPlane) -> AsyncIterator[None]:
        kueue_command = [
            str(self.peers.kueue),
            f"--config={self.peers.config_file}",
            f"--kubeconfig={plane.kubeconfig_path}",
        ]
        scheduler_command = [
            str(self.peers.scheduler),
            f"--kubeconfig={plane.kubeconfig_path}",
            "--leader-elect=false",
            "--secure-port=0",
            "-v=1",
        ]
        async with (
            process_running(kueue_command, self.workdir / "kueue.log", self.summaries["kueue"]),
            process_running(
                scheduler_command,
                self.workdir / "kube-scheduler.log",
                self.summaries["kube-scheduler"],
            ),
        ):
            yield

    async def ready(self) -> None:
        client, peers = self.client, self.peers
        await until(lambda: listening(peers.webhook_port), 180, "Kueue's webhook listening")
        await client.create(pod_webhook(peers.webhook_port, peers.ca_bundle))
        for manifest in queue_objects(self.live_run.nodes, tas=self.live_run.tas):
            await client.create(manifest)

        async def queues_active() -> bool:
            for team in TEAMS:
                got = await client.get(CLUSTER_QUEUE, team.name)
                conditions = (got.get("status") or {}).get("conditions", [])
                if not any(c["type"] == "Active" and c["status"] == "True" for c in conditions):
                    return False
            return True

        await until(queues_active, 120, "the teams' ClusterQueues Active")

    def objects(self, job: TeamJob, attempt: int, indices: list[int]) -> list[Any]:
        return pod_manifests(job, attempt, tas=self.live_run.tas, indices=indices)

    async def replace(self, job: TeamJob, attempt: Attempt) -> None:
        # Kueue deletes the group's pods one by one; the gated ones it leaves (`Pod.Stop`
        # skips suspended pods) stay members of the group.
        await asyncio.sleep(SETTLE_S)
        pods = self.pods
        # The kubelet's part: a deleted running pod's containers are killed and it is
        # reported Failed (Kueue then lets it go).
        ended = [pods[n] for n in attempt.pods if n in pods and pods[n].spec.node_name]
        await self.kubelet.finish(ended, "Failed")
        kept = {
            i: n
            for i, n in enumerate(attempt.pods)
            if n in pods
            and pods[n].metadata.deletion_timestamp is None
            and not pods[n].spec.node_name
        }

        def over(name: str) -> bool:
            # No longer an active pod of the group: gone, Failed, or deleted unbound.
            pod = pods.get(name)
            if pod is None:
                return True
            if pod.status is not None and pod.status.phase == "Failed":
                return True
            return pod.metadata.deletion_timestamp is not None and not pod.spec.node_name

        async def old_ones_over() -> bool:
            return all(over(n) for i, n in enumerate(attempt.pods) if i not in kept)

        try:
            await until(old_ones_over, REPLACE_WAIT_S, f"{job.name}'s evicted pods ended")
        except TimeoutError as error:
            self.live_run.errors.append(str(error))
        # The owner's part: the group's missing pods again, under new names.
        await self.submit(job, len(self.live_run.attempts[job.name]), kept)

    def not_placeable(self, end: float) -> int:
        return not_placeable(self.attempts(), end)


# -- figures ----------------------------------------------------------------------------------


def seed_figures(run: LiveRun) -> dict[str, Any]:
    """The run judged by `_queue_stream`'s figures (see the module docstring); times relative
    to the run's start."""
    row: dict[str, Any] = {
        "seed": run.seed,
        "nodes": run.nodes,
        "load": run.load,
        "tas": run.tas,
        "jobs": len(run.jobs),
        "jobs_done": sum(job.ended is not None for job in run.jobs),
        "versions": run.versions,
        "errors": run.errors,
        "log_warnings": run.log_warnings,
        "log_first_warnings": run.log_first_warnings,
    }
    if run.start is None:
        return row
    held = spans(run.jobs)
    window = saturated_window(run.jobs, run.start)
    shares = gpu_time_shares(held, window)
    fair = fair_shares(run.nodes)
    latencies = reclaim_latencies(run.jobs, run.nodes)
    ended = [job.ended for job in run.jobs if job.ended is not None]
    return {
        **row,
        "window_s": [round(window[0] - run.start, 1), round(window[1] - run.start, 1)],
        "shares": {team: round(value, 4) for team, value in shares.items()},
        "fair_shares": {team: round(value, 4) for team, value in fair.items()},
        "share_error_pts": round(100 * max(abs(shares[t] - fair[t]) for t in fair), 2),
        "useful_gpu_pct": round(useful_gpu_pct(held, window, run.nodes), 1),
        "reclaim_s": {
            "gangs": len(latencies),
            "p50": round(percentile(latencies, 0.5), 2),
            "max": round(max(latencies, default=0.0), 2),
        },
        "admitted_not_placeable": run.admitted_not_placeable,
        "attempts": sum(len(a) for a in run.attempts.values()),
        "evictions": run.evictions,
        "eviction_reasons": eviction_reasons(run),
        "evicted_gpu_s": {team: round(value) for team, value in run.evicted_gpu_s.items()},
        "makespan_s": round(max(ended) - run.start, 1) if ended else None,
        "gpus": run.nodes * GPUS,
    }


def summary_line(row: dict[str, Any]) -> str:
    """One seed's figures as a line of text."""
    if "shares" not in row:
        return f"seed {row['seed']}: no run: {'; '.join(row['errors'])}"
    shares = " ".join(
        f"{team} {100 * row['shares'][team]:.1f}% (fair {100 * row['fair_shares'][team]:.2f}%)"
        for team in row["shares"]
    )
    reclaim = row["reclaim_s"]
    return (
        f"seed {row['seed']}: {shares}; useful GPUs {row['useful_gpu_pct']}%; "
        f"reclaim p50 {reclaim['p50']} s max {reclaim['max']} s ({reclaim['gangs']} gangs); "
        f"admitted not placeable {row['admitted_not_placeable']}; "
        f"evictions {sum(row['evictions'].values())}; "
        f"{row['jobs_done']}/{row['jobs']} jobs done; errors {len(row['errors'])}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=256)
    parser.add_argument("--seeds", default="7")
    parser.add_argument(
        "--load",
        type=float,
        default=2.0,
        help="each team's GPUs over the cluster's (2.0: a saturated window of minutes)",
    )
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")
    parser.add_argument("--time-scale", type=float, default=1.0, help="multiplies run times")
    parser.add_argument("--no-tas", action="store_true", help="no topology-aware scheduling")
    parser.add_argument(
        "--workdir", type=Path, default=None, help="where each seed's logs go (default: /tmp)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")
    args = parser.parse_args(argv)
    if args.nodes < 16 or args.nodes % 16:
        parser.error("--nodes: a positive multiple of 16 (whole leaves)")
    started = time.monotonic()
    base = args.workdir or Path(os.environ.get("TMPDIR", "/tmp")) / f"queues-kueue-{os.getpid()}"
    runs = []
    for seed in (int(s) for s in args.seeds.split(",")):
        run = asyncio.run(
            run_kueue(
                args.nodes,
                seed,
                args.load,
                workdir=base / f"seed{seed}",
                timeout_s=args.timeout,
                tas=not args.no_tas,
                time_scale=args.time_scale,
            )
        )
        runs.append(seed_figures(run))
        if not args.json:
            print(summary_line(runs[-1]), flush=True)
    if args.json:
        out = {
            "bench": "queues_kueue",
            "nodes": args.nodes,
            "load": args.load,
            "reclaim_at_s": RECLAIM_AT_S,
            "time_scale": args.time_scale,
            "logs": str(base),
            "runs": runs,
            "seconds": round(time.monotonic() - started),
            "cpus": os.cpu_count(),
        }
        print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
