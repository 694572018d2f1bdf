"""Benchmark of crdkit.scheduling: the mirror's per-event cost, decisions, and binding end to end.

    python benches/scheduling_bench.py [--nodes 1024,10000] [--e2e-nodes 1024] [--gangs 100]
        [--decisions 32] [--skip-e2e] [--repeats 3] [--skip-in-memory]
        [--saturated 256,1024,10000] [--waiting 300] [--gang-sizes 1,2,4]
        [--saturated-passes 5] [--bind-events 6]
        [--saturated-profile PATH] [--saturated-py-spy PATH [--py-spy-native]]
        [--profile-nodes 1024]
        [--throughput 5000] [--throughput-gangs 1000] [--throughput-sizes 4]

Prints one JSON object with three parts, all measured in the same run, and two more on request
(``--saturated``, ``--throughput``; ``--skip-in-memory`` leaves out the first two):

``mirror``: per cluster size, the `ClusterMirror`'s cost of one informer event, in µs (the
median over ``--repeats`` fresh mirrors of the mean over every node or pod of the cluster):
``node_added``; ``node_heartbeat`` (a new ``lastHeartbeatTime`` and resourceVersion, nothing the
placer reads: the most common event of a real cluster); ``node_changed`` (a label added);
``pod_bound`` (a pod added with ``spec.nodeName``); ``pod_status`` (phase Pending to Running,
same requests); ``pod_deleted``. The Node and Pod objects are built before the clock starts:
they are what an informer hands its handlers. ``memory``: a mirror of the largest size with all
its pods (10,000 nodes and 80,000 pods by default): the Python heap it allocates (tracemalloc
peak; the Rust state is outside it) and the process's RSS growth (both).

``decisions``: per cluster size, three workloads of ``--decisions`` gangs each, ``required``
under one rack: ``rack16`` (16 pods of 8 GPUs), ``mix`` (1 to 16 such pods, fixed seed) and
``pytorchjob`` (the same sizes as ``mix``, each gang of two tasks as `build_gang` makes a
PyTorchJob's pods: a master and the workers). Each gang is decided two ways on the same
starting state:

- ``incremental``: what `GangScheduler` does: ``mirror.place(gang)``, then ``assume_pod`` for
  each pod of the placement (what `Binder.reserve` does), then each pod's bound event
  (``set_pod`` with ``spec.nodeName``) confirming the assumption;
- ``rebuild``: the baseline of rebuilding per decision, as a scheduler without a mirror does:
  every pod's requests summed per node in Python (`pod_requests`), then a fresh placer `Cluster`
  from every node's entry plus that usage, then ``place``. The node entries are computed once
  (the baseline is not charged for converting Node objects); the pods of earlier decisions are
  added to its pod list untimed.

Both must give the same placement status for every gang (asserted). Reported: ms per decision
(median and mean), decisions per second (1 / mean), the ratio of the rebuild's mean to the
incremental mean, and how many gangs were placed. The incremental side runs ``--repeats``
times on fresh mirrors (median of the per-run means), the rebuild once, its cost being the
point.

The cluster: ``--nodes`` nodes of 8 GPUs, 96 CPUs, 1536Gi and 110 pods, racks of 16 nodes,
blocks of 8 racks; 8 pods bound to every node. A rack is empty with probability 3/8 (seed 7);
in the others 8 to 16 nodes (uniform) are busy, with 8 pods of one GPU each. The other nodes
run 8 CPU-only pods. About 47 % of the GPUs are used; a 16-pod gang fits only in an empty rack,
so at 1,024 nodes (26 empty racks of 64) the last 6 of the 32 ``rack16`` gangs find no room: a
decision that finds none is timed as well.

``e2e``: a local control plane (kube-apiserver and etcd, `crdkit.testing.ControlPlane`) with
the Volcano and scheduler-plugins PodGroup CRDs, ``--e2e-nodes`` simulated nodes (created with
bounded concurrency, their ``not-ready`` taint patched away as no node controller runs) and a
`GangScheduler` on a `Manager` in this process. ``--gangs`` gangs are submitted in a burst
(``--e2e-concurrency`` gangs being created at once), each a Volcano PodGroup (``minMember``,
``networkTopology: hard``, tier 1: one rack) and its pods, created as Kubeflow's
training-operator creates a PyTorchJob's (a master and workers, the
``scheduling.k8s.io/group-name`` annotation), 1, 2, 4, 8 or 16 pods of 8 GPUs (35/30/20/10/5 %,
fixed seed: about a third of a 1,024-node cluster, so no gang waits for capacity). Timed per
gang: from its last pod's create call returning to a separate pod informer having seen all its
pods bound. Reported: p50/p99/max ms, gangs bound per second over the burst (first create to
last bound), the scheduler's passes, the Events in the gangs' namespace a second after the last
bind (the scheduler's ``Scheduled`` and ``FailedScheduling``: API writes competing with the
binds) and the setup times. With ``--e2e-nodes 10000`` creating the nodes alone takes 1 to 2
minutes on a 2-core machine (20,000 API calls), and binding is slow there: a gang of a master
and one worker (two tasks of one pod) costs the placer about 350 ms at 10,000 nodes (18 ms at
1,024; other shapes take well under 1 ms), and a pass places its whole batch in one call, so
p50 was 7 to 13 s in our runs. The default stays at 1,024.

``saturated`` (only with ``--saturated``, else null): per cluster size, a `GangScheduler` on a
`Manager` over the in-memory FakeCluster (no apiserver, no network: the scheduler's own cost)
with the setup of ``scheduler_pass_bench.py`` (`scheduler_pass_bench.saturated`, imported, not
copied): that many 8-GPU nodes in leaves of 16, each full with one running pod, and
``--waiting`` gangs queued behind them, each of pods that want a whole node, their sizes taken in
turn from ``--gang-sizes`` (1, 2, 4 by default: a gang of one is a plain pod, a bigger one a
coscheduling PodGroup whose ``minMember`` is all its pods; no topology constraint). Measured
once every gang is queued and the scheduler idle:

- ``pass_ms_median``/``pass_ms_max`` over ``passes`` (``--saturated-passes``) passes with every
  gang waiting: each woken by a node too small for any gang (added in one write), so the pass
  places the whole queue (one batch of the Rust placer), explains why each still waits and
  writes what changed. A pass's time is the scheduler's ``last_pass_seconds`` (wall time, the
  placer's worker thread included); only passes that placed every waiting gang count.
  ``place_ms_median``: the part of those passes spent awaiting ``place_all_records_async`` (the
  placer on its worker thread, and whatever the event loop ran meanwhile).
- ``bind_ms_median``/``bind_ms_max`` over ``--bind-events`` capacity events, each making exactly
  the room the gang at the head of the queue needs, in turn by deleting as many running pods
  (grace period 0, as once a kubelet confirms the stop; at once), by adding as many whole nodes
  (one write each) and by reporting as many running pods ``Succeeded`` (a status write each, at
  once): from the fake apiserver storing the write that completes the room to it storing the
  last of the gang's pods' bindings (``spec.nodeName`` set), both stamped with
  ``time.perf_counter`` in a write listener; ``bind_ms_by_event`` per kind. On the fake cluster
  a delete also runs its garbage collector (a scan of every object, about 50 ms at 10,000
  nodes) on the event loop, after the delete is stored: ``pod_deleted`` is charged for it, and
  ``pod_succeeded`` shows the same freeing without it. Each event starts with the scheduler
  idle (no ``pass_pause`` under way). ``binds`` lists each event: its kind, the gang's pods, the
  milliseconds (null: not bound within 60 s), the passes in between, and the milliseconds split
  into ``wake_ms`` (to the start of the first pass after the freeing), ``pass_ms`` (the pass
  that placed the gang) and ``after_pass_ms`` (from its end to the last bind: the bind's API
  calls share the event loop with the status writes and Events the pass spawned), and
  ``writes``, the API writes stored meanwhile (the gang's binds included); ``bound`` counts the
  events whose gang was bound, ``bound_within_1s`` those within a second (the scheduler's aim:
  a gang that fits is bound within 1 s of the capacity freeing), ``others_bound`` the pods of
  other gangs bound meanwhile (0: the room went to the head).
- ``gc_full``: the garbage collector's full collections during the measurement (how many, their
  total and longest ms): each stops the event loop, and at 10,000 nodes, with the fake
  apiserver's objects in the same process, one takes about 0.4 s; they explain most outliers.

``--saturated-profile PATH`` runs the same measurement once more at ``--profile-nodes`` nodes
(1,024 by default) under cProfile, enabled for the timed passes and bind events only (not the
setup), writes the pstats file to PATH and prints the 25 functions of most cumulative time to
stderr. cProfile sees the event loop's thread only: the placer's worker thread shows as the
loop's wait (``select``/``epoll``). Under the profiler the Python side runs slower, so its
figures (``saturated_profile``) are not the timed ones. ``--saturated-py-spy PATH`` samples the
same measurement with py-spy instead (``_profile_split.record``: Python stacks of every thread,
100 a second, without stopping the process, so the figures stay close to the timed ones), writes
its raw stacks to PATH and gives, in ``saturated_py_spy``, the share of the samples (``split_pct``)
taken by the placer's worker thread, by each part of a pass (`SPY_PHASES`) and by what runs
between passes (`SPY_OUTSIDE`: the Events and status writes of waiting gangs, binds, the fake
apiserver, the informers). Python stacks do not show the garbage collector: its pauses are
charged to whatever allocated when it ran (``gc_full`` counts the full collections). With
``--py-spy-native`` py-spy reads the C and Rust frames too, and its collections are a part of
their own; it then stops the process at each sample, so the row's times are not the timed ones.

``throughput`` (only with ``--throughput``, else null): per cluster size, pods bound per second
in a burst, the row upstream kube-scheduler's topology-aware workload scheduling is measured by
(scheduler_perf's ``TopologyAwareScheduling``, test/integration/scheduler_perf/podgroup/tas in
kubernetes/kubernetes: 5,000 nodes, 750 to 2,250 PodGroups of 4 pods, each gang required in one
rack). A `GangScheduler` on a `Manager` over the in-memory FakeCluster, as the saturated row,
watching Kubernetes' own PodGroup (``scheduling.k8s.io/v1beta1``): that many empty 8-GPU nodes in
leaves of 16 (`scheduler_pass_bench.gpu_nodes`, the saturated row's layout and leaf label, the
scheduler's only level), then ``--throughput-gangs`` gangs (1,000 by default), their sizes taken
in turn from ``--throughput-sizes`` (4 by default, as upstream's), each pod asking a whole node
(8 GPUs), each PodGroup ``gang.minCount`` all its pods and one topology constraint, the leaf
label: every pod of the gang in one leaf. By default 4,000 of the 5,000 nodes. As upstream's
test does, the PodGroups are created first and the measurement starts once the scheduler's
informer has them all and it is idle; then every pod is created through the API, one call after
another, gang by gang (the objects built before the clock). Timed from the first pod's create
call to the fake apiserver storing the last pod's binding (a write listener, as the saturated
row's bind events): ``pods_per_s`` and ``gangs_per_s`` (every pod of the gang bound) over
``burst_s`` (``bound_pods`` and ``bound_gangs`` of ``pods`` and ``gangs``, within ``--wait``
seconds); ``create_s``, the creates alone (they share the event loop with the scheduler);
``bind_p50_ms``/``bind_p99_ms``/``bind_max_ms`` per gang, from its last pod's create call
returning to its last bind stored; ``passes`` and their median and longest ms; ``writes``, every
write the apiserver stored meanwhile (binds, PodGroup statuses, Events); ``gc_full``. Upstream's
figure is scheduler_perf's ``SchedulingThroughput`` (the average of per-second samples of pods
scheduled, on the CI's machine), ours one ratio over the burst on this one.

``loadavg`` (start and end) and ``cpus`` say how busy the machine was. ``--profile`` prints a
cProfile of one pass of the mirror's events at the largest size to stderr (it slows that pass,
which is not one of the timed ones).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import io
import json
import os
import pstats
import random
import signal
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from crdkit.placer import Cluster, Placement
from crdkit.resources import Node, Pod
from crdkit.scheduling import ClusterMirror, node_entry, pod_key, pod_requests
from crdkit.scheduling.mirror import pod_holds_capacity
from crdkit.scheduling.requests import format_quantity, requests_as_quantities

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benches' shared modules

import _profile_split
from _bind_latency import JobsBound, bind_latency_row

BLOCK = "bench.crdkit.io/block"
RACK = "bench.crdkit.io/rack"
POOL = "bench.crdkit.io/pool"
LEVELS = [BLOCK, RACK]
RACK_NODES = 16
BLOCK_RACKS = 8
PODS_PER_NODE = 8
EMPTY_RACKS = 0.375
"""The share of racks with no busy node; the others have 8 to 16 busy nodes of 16."""
GPU = "nvidia.com/gpu"
SCHEDULER = "crdkit-bench-scheduler"
BACKGROUND_NS = "bench-bg"
GANG_NS = "bench"
CRDS = Path(__file__).resolve().parents[1] / "tests" / "data" / "crds"
PODGROUP_CRDS = [
    CRDS / "volcano_scheduling.volcano.sh_podgroups.yaml",
    CRDS / "scheduler-plugins_scheduling.x-k8s.io_podgroups.yaml",
]
E2E_SIZES = (1, 2, 4, 8, 16)
E2E_WEIGHTS = (35, 30, 20, 10, 5)
EVENTS = (
    "node_added",
    "pod_bound",
    "node_heartbeat",
    "node_changed",
    "pod_status",
    "pod_deleted",
)


# -- objects as an informer hands them over ----------------------------------------------------


def node_name(index: int) -> str:
    return f"node-{index:05d}"


def node_manifest(
    index: int,
    *,
    pool: str = "bench",
    heartbeat: str = "2026-01-01T00:00:00Z",
    resource_version: str = "1",
    extra_labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A Ready GPU node in its rack and block, as the apiserver stores it."""
    name = node_name(index)
    rack = index // RACK_NODES
    labels = {
        POOL: pool,
        BLOCK: f"b{rack // BLOCK_RACKS:03d}",
        RACK: f"r{rack:04d}",
        "kubernetes.io/hostname": name,
        **(extra_labels or {}),
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels, "resourceVersion": resource_version},
        "status": {
            "allocatable": {"cpu": "96", "memory": "1536Gi", GPU: "8", "pods": "110"},
            "capacity": {"cpu": "96", "memory": "1536Gi", GPU: "8", "pods": "110"},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "lastHeartbeatTime": heartbeat,
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        },
    }


def pod_manifest(
    name: str,
    namespace: str,
    requests: dict[str, str],
    *,
    node: str | None = None,
    phase: str = "Pending",
    uid: str | None = None,
) -> dict[str, Any]:
    """A one-container pod, bound to ``node`` when given."""
    spec: dict[str, Any] = {
        "schedulerName": SCHEDULER,
        "containers": [{"name": "main", "image": "bench", "resources": {"requests": requests}}],
    }
    if node is not None:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}"},
        "spec": spec,
        "status": {"phase": phase},
    }


GPU_POD = {"cpu": "1", "memory": "8Gi", GPU: "1"}
CPU_POD = {"cpu": "1", "memory": "8Gi"}
GANG_POD = {"cpu": "4", "memory": "64Gi", GPU: "8"}


@dataclass
class ClusterState:
    """A cluster's Node objects and the Pod objects bound to them (see the module docstring)."""

    nodes: list[Node]
    pods: list[Pod]


def cluster_state(count: int, seed: int = 7) -> ClusterState:
    """``count`` nodes (a multiple of 16 is not needed) with 8 pods bound on each."""
    rng = random.Random(seed)
    nodes = [Node.model_validate(node_manifest(i)) for i in range(count)]
    busy: set[int] = set()
    for start in range(0, count, RACK_NODES):
        members = list(range(start, min(start + RACK_NODES, count)))
        if rng.random() >= EMPTY_RACKS:
            busy.update(rng.sample(members, rng.randint(len(members) // 2, len(members))))
    pods = []
    for index in range(count):
        requests = GPU_POD if index in busy else CPU_POD
        for slot in range(PODS_PER_NODE):
            name = f"bg-{index:05d}-{slot}"
            pods.append(
                Pod.model_validate(
                    pod_manifest(name, BACKGROUND_NS, requests, node=node_name(index))
                )
            )
    return ClusterState(nodes, pods)


def bound_copy(pod: Pod, node: str, phase: str | None = None) -> Pod:
    """``pod`` as its next event shows it: bound to ``node`` (and in ``phase``)."""
    update: dict[str, Any] = {"spec": pod.spec.model_copy(update={"node_name": node})}
    if phase is not None and pod.status is not None:
        update["status"] = pod.status.model_copy(update={"phase": phase})
    return pod.model_copy(update=update)


def with_phase(pod: Pod, phase: str) -> Pod:
    assert pod.status is not None
    return pod.model_copy(update={"status": pod.status.model_copy(update={"phase": phase})})


# -- part 1: the mirror's per-event cost -------------------------------------------------------


def per_event_us(handler: Callable[[Any], None], items: Sequence[Any]) -> float:
    """Mean µs of ``handler`` over ``items``, one call each."""
    started = time.perf_counter()
    for item in items:
        handler(item)
    return (time.perf_counter() - started) / len(items) * 1e6


@dataclass
class Updates:
    """The later events of a cluster's objects: a heartbeat and a label per node, the phase
    Running per pod."""

    heartbeats: list[Node]
    changed: list[Node]
    running: list[Pod]


def updates(state: ClusterState) -> Updates:
    count = len(state.nodes)
    heartbeats = [
        Node.model_validate(
            node_manifest(i, heartbeat="2026-01-01T00:00:10Z", resource_version="2")
        )
        for i in range(count)
    ]
    changed = [
        Node.model_validate(
            node_manifest(i, resource_version="3", extra_labels={"bench.crdkit.io/drain": "soon"})
        )
        for i in range(count)
    ]
    running = [with_phase(pod, "Running") for pod in state.pods]
    return Updates(heartbeats, changed, running)


def mirror_events(state: ClusterState, later: Updates) -> dict[str, float]:
    """One fresh mirror taken through every kind of event, once per node or pod."""
    mirror = ClusterMirror(LEVELS)
    result = {
        "node_added": per_event_us(mirror.set_node, state.nodes),
        "pod_bound": per_event_us(mirror.set_pod, state.pods),
        "node_heartbeat": per_event_us(mirror.set_node, later.heartbeats),
        "node_changed": per_event_us(mirror.set_node, later.changed),
        "pod_status": per_event_us(mirror.set_pod, later.running),
        "pod_deleted": per_event_us(mirror.remove_pod, later.running),
    }
    if any(mirror.used(name) for name in mirror.node_names()):
        raise AssertionError("mirror: usage left after every pod was deleted")
    return result


def measure_mirror(state: ClusterState, repeats: int) -> dict[str, Any]:
    """Median per-event µs over ``repeats`` fresh mirrors."""
    later = updates(state)
    runs = [mirror_events(state, later) for _ in range(repeats)]
    result: dict[str, Any] = {"nodes": len(state.nodes), "pods": len(state.pods)}
    for event in EVENTS:
        result[f"{event}_us"] = round(statistics.median(run[event] for run in runs), 2)
    result["repeats"] = repeats
    return result


def profile_mirror(state: ClusterState, top: int = 15) -> str:
    """cProfile of one `mirror_events` pass (the handlers only), the ``top`` entries by own
    time: what the per-event cost is made of."""
    later = updates(state)
    profile = cProfile.Profile()
    profile.runcall(mirror_events, state, later)
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(top)
    return text.getvalue()


def build_mirror(state: ClusterState) -> ClusterMirror:
    mirror = ClusterMirror(LEVELS)
    for node in state.nodes:
        mirror.set_node(node)
    for pod in state.pods:
        mirror.set_pod(pod)
    return mirror


def rss_mb() -> float:
    """This process's resident set, MiB (Linux)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def measure_memory(state: ClusterState) -> dict[str, Any]:
    """What a mirror holding ``state`` costs: RSS growth, then the traced Python heap."""
    gc.collect()
    before = rss_mb()
    mirror = build_mirror(state)
    gc.collect()
    rss_delta = rss_mb() - before
    del mirror
    gc.collect()
    tracemalloc.start()
    mirror = build_mirror(state)
    _, peak = tracemalloc.get_traced_memory()
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del mirror
    return {
        "nodes": len(state.nodes),
        "pods": len(state.pods),
        "rss_delta_mb": round(rss_delta, 1),
        "tracemalloc_peak_mb": round(peak / 2**20, 1),
        "tracemalloc_held_mb": round(current / 2**20, 1),
    }


# -- part 2: decisions, incremental against rebuild-per-decision -------------------------------

GANG_MILLI = pod_requests(Pod.model_validate(pod_manifest("sample", GANG_NS, GANG_POD)))


WORKLOADS = ("rack16", "mix", "pytorchjob")


def gang_sizes(workload: str, count: int, seed: int = 11) -> list[int]:
    """The pods of each gang of ``workload`` (one of `WORKLOADS`)."""
    if workload == "rack16":
        return [16] * count
    rng = random.Random(seed)
    return [rng.randint(1, 16) for _ in range(count)]


def gang_document(name: str, size: int, *, master: bool = False) -> dict[str, Any]:
    """The placer's gang: ``size`` pods of 8 GPUs, all under one rack; with ``master``, as
    `build_gang` makes it of a PyTorchJob's pods: a task ``master`` of one pod and a task
    ``worker`` of the others."""
    requests = requests_as_quantities(GANG_MILLI)
    if master:
        tasks = [{"name": "master", "replicas": 1, "requests": requests}]
        if size > 1:
            tasks.append({"name": "worker", "replicas": size - 1, "requests": requests})
    else:
        tasks = [{"name": "worker", "replicas": size, "requests": requests}]
    return {"name": name, "tasks": tasks, "topology": {"mode": "required", "level": RACK}}


@dataclass
class Workload:
    """Gangs and their not yet bound pods (pod ``i`` of a gang is ``<gang>-<i>``)."""

    gangs: list[dict[str, Any]]
    pods: dict[str, list[Pod]]


def workload(kind: str, count: int) -> Workload:
    gangs, pods = [], {}
    for index, size in enumerate(gang_sizes(kind, count)):
        name = f"{kind}-{index:03d}"
        gangs.append(gang_document(name, size, master=kind == "pytorchjob"))
        pods[name] = [
            Pod.model_validate(pod_manifest(f"{name}-{i}", GANG_NS, GANG_POD)) for i in range(size)
        ]
    return Workload(gangs, pods)


def placed_pods(placement: Placement, pending: Sequence[Pod]) -> list[tuple[Pod, str]]:
    """The gang's pods paired with their nodes, in assignment order."""
    nodes = [a.node for a in placement.assignments for _ in range(a.count)]
    return list(zip(pending, nodes, strict=False))


@dataclass
class Run:
    """One pass of a workload: each gang's status and the seconds each decision took."""

    statuses: list[str]
    seconds: list[float]


def run_incremental(state: ClusterState, work: Workload) -> Run:
    """place, assume each pod, confirm each pod's bound event: timed per gang."""
    mirror = build_mirror(state)
    statuses, seconds = [], []
    for gang in work.gangs:
        pending = work.pods[gang["name"]]
        started = time.perf_counter()
        placement = mirror.place(gang)
        pairs = [] if placement.status == "unschedulable" else placed_pods(placement, pending)
        for pod, node in pairs:
            key = pod_key(pod.metadata.namespace, pod.metadata.name)
            mirror.assume_pod(key, node, GANG_MILLI, uid=pod.metadata.uid)
        decided = time.perf_counter()
        events = [bound_copy(pod, node) for pod, node in pairs]  # the informer's work
        confirming = time.perf_counter()
        for event in events:
            mirror.set_pod(event)
        seconds.append(decided - started + time.perf_counter() - confirming)
        statuses.append(placement.status)
    return Run(statuses, seconds)


def rebuilt_cluster(entries: Sequence[dict[str, Any]], pods: Iterable[Pod]) -> Cluster:
    """A placer `Cluster` from scratch: every pod's requests summed per node, in Python."""
    used: dict[str, dict[str, int]] = {}
    for pod in pods:
        if not pod_holds_capacity(pod):
            continue
        total = used.setdefault(pod.spec.node_name or "", {"pods": 0})
        for resource, milli in pod_requests(pod).items():
            total[resource] = total.get(resource, 0) + milli
        total["pods"] += 1000
    nodes = [
        {
            **entry,
            "used": {r: format_quantity(v) for r, v in used.get(entry["name"], {}).items()},
        }
        for entry in entries
    ]
    return Cluster(LEVELS, nodes)


def run_rebuild(state: ClusterState, work: Workload) -> Run:
    """Rebuild usage and the Cluster, then place: timed per gang."""
    entries = [node_entry(node) for node in state.nodes]
    pods = list(state.pods)
    statuses, seconds = [], []
    for gang in work.gangs:
        started = time.perf_counter()
        placement = rebuilt_cluster(entries, pods).place(gang)
        seconds.append(time.perf_counter() - started)
        statuses.append(placement.status)
        if placement.status != "unschedulable":
            pending = work.pods[gang["name"]]
            pods.extend(bound_copy(pod, node) for pod, node in placed_pods(placement, pending))
    return Run(statuses, seconds)


def decision_figures(runs: Sequence[Run]) -> dict[str, Any]:
    means = [statistics.fmean(run.seconds) for run in runs]
    medians = [statistics.median(run.seconds) for run in runs]
    mean = statistics.median(means)
    return {
        "ms_per_decision_median": round(statistics.median(medians) * 1000, 3),
        "ms_per_decision_mean": round(mean * 1000, 3),
        "decisions_per_s": round(1 / mean, 1),
        "runs": len(runs),
    }


def measure_decisions(state: ClusterState, kind: str, count: int, repeats: int) -> dict[str, Any]:
    """Both ways of deciding the same gangs on the same state; see the module docstring."""
    work = workload(kind, count)
    incremental = [run_incremental(state, work) for _ in range(repeats)]
    rebuild = run_rebuild(state, work)
    for run in incremental:
        if run.statuses != rebuild.statuses:
            diff = next(
                i
                for i, (a, b) in enumerate(zip(run.statuses, rebuild.statuses, strict=True))
                if a != b
            )
            raise AssertionError(
                f"{kind}: gang {diff} is {run.statuses[diff]} incrementally "
                f"but {rebuild.statuses[diff]} rebuilt"
            )
    fast, slow = decision_figures(incremental), decision_figures([rebuild])
    return {
        "gangs": count,
        "pods": sum(len(p) for p in work.pods.values()),
        "placed": sum(status != "unschedulable" for status in rebuild.statuses),
        "incremental": fast,
        "rebuild": slow,
        "rebuild_over_incremental": round(
            slow["ms_per_decision_mean"] / fast["ms_per_decision_mean"], 1
        ),
    }


# -- part 3: end to end on a local control plane ----------------------------------------------


def e2e_gang_sizes(count: int, seed: int = 7) -> list[int]:
    rng = random.Random(seed)
    return [rng.choices(E2E_SIZES, E2E_WEIGHTS)[0] for _ in range(count)]


def podgroup_manifest(name: str, size: int) -> dict[str, Any]:
    """A Volcano PodGroup: all ``size`` pods at once, inside one tier-1 domain (a rack)."""
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": GANG_NS},
        "spec": {
            "minMember": size,
            "queue": "default",
            "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
        },
    }


def pytorchjob_pod(job: str, role: str, index: int) -> dict[str, Any]:
    """A PyTorchJob pod as Kubeflow's training-operator v1 creates it, in a Volcano gang."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job}-{role}-{index}",
            "namespace": GANG_NS,
            "labels": {
                "training.kubeflow.org/job-name": job,
                "training.kubeflow.org/operator-name": "pytorchjob-controller",
                "training.kubeflow.org/replica-type": role,
                "training.kubeflow.org/replica-index": str(index),
            },
            "annotations": {"scheduling.k8s.io/group-name": job},
        },
        "spec": {
            "schedulerName": SCHEDULER,
            "restartPolicy": "OnFailure",
            "containers": [
                {
                    "name": "pytorch",
                    "image": "docker.io/kubeflowkatib/pytorch-mnist:v1",
                    "resources": {"requests": GANG_POD, "limits": {GPU: GANG_POD[GPU]}},
                }
            ],
        },
    }


def pytorchjob_pods(job: str, size: int) -> list[dict[str, Any]]:
    """A master and ``size - 1`` workers."""
    return [pytorchjob_pod(job, "master", 0)] + [
        pytorchjob_pod(job, "worker", i) for i in range(size - 1)
    ]


async def create_nodes(client: Any, count: int, pool: str, concurrency: int) -> None:
    """``count`` nodes, ``concurrency`` at a time, each created then untainted (the apiserver
    taints a new Node not-ready and no node controller runs here to lift it)."""
    gate = asyncio.Semaphore(concurrency)

    async def one(index: int) -> None:
        async with gate:
            manifest = node_manifest(index, pool=pool)
            del manifest["metadata"]["resourceVersion"]
            node = await client.create(Node.model_validate(manifest))
            await client.patch(Node, node.metadata.name, {"spec": {"taints": None}})

    async with asyncio.TaskGroup() as group:
        for index in range(count):
            group.create_task(one(index))


async def measure_e2e(
    nodes: int, gangs: int, concurrency: int, node_concurrency: int, wait_s: float
) -> dict[str, Any]:
    """See the module docstring's ``e2e``."""
    from crdkit.client import Client
    from crdkit.resources import Event
    from crdkit.runtime import Informer
    from crdkit.scheduling import GangScheduler
    from crdkit.testing import ControlPlane, running_manager

    sizes = {f"job-{i:04d}": size for i, size in enumerate(e2e_gang_sizes(gangs))}
    pool = "e2e"
    setup_started = time.perf_counter()
    async with ControlPlane() as plane, Client.from_control_plane(plane) as client:
        await plane.install_crds(PODGROUP_CRDS)
        await plane.create_namespace(GANG_NS)
        plane_s = time.perf_counter() - setup_started
        await create_nodes(client, nodes, pool, node_concurrency)
        nodes_s = time.perf_counter() - setup_started - plane_s

        complete: dict[str, float] = {}
        jobs_bound = JobsBound(
            sizes,
            lambda pod: (pod.metadata.annotations or {}).get("scheduling.k8s.io/group-name", ""),
        )
        bound = jobs_bound.bound

        watch: Informer[Pod] = Informer(client, Pod, namespace=GANG_NS)
        watch.add_event_handler(jobs_bound.on_pod, lambda _old, new: jobs_bound.on_pod(new), None)
        await watch.start()
        await watch.wait_for_sync()

        scheduler = GangScheduler(
            SCHEDULER, LEVELS, pod_groups=("volcano",), node_selector=f"{POOL}={pool}"
        )
        synced = asyncio.Event()  # the scheduler's mirror has every node
        scheduler.mirror.on_capacity_freed(
            lambda: synced.set() if len(scheduler.mirror) >= nodes else None
        )
        try:
            async with running_manager(client, scheduler):
                if len(scheduler.mirror) < nodes:
                    await asyncio.wait_for(synced.wait(), wait_s)
                ready_s = time.perf_counter() - setup_started - plane_s - nodes_s
                passes_before = scheduler.passes
                gate = asyncio.Semaphore(concurrency)

                async def submit(job: str, size: int) -> None:
                    async with gate:
                        await client.create(podgroup_manifest(job, size))
                        for pod in pytorchjob_pods(job, size):
                            await client.create(Pod.model_validate(pod))
                        complete[job] = time.perf_counter()

                started = time.perf_counter()
                async with asyncio.TaskGroup() as group:
                    for job, size in sizes.items():
                        group.create_task(submit(job, size))
                with contextlib.suppress(TimeoutError):  # reported as fewer gangs bound
                    await asyncio.wait_for(jobs_bound.done.wait(), wait_s)
                finished = max(bound.values(), default=time.perf_counter())
                passes = scheduler.passes - passes_before
                await asyncio.sleep(1.0)  # the Events of the last binds
                events = len((await client.list(Event, namespace=GANG_NS)).items)
        finally:
            await watch.stop()

    latencies = [(bound[job] - complete[job]) * 1000 for job in bound if job in complete]
    return {
        "nodes": nodes,
        "gangs": gangs,
        "pods": sum(sizes.values()),
        "bound_gangs": len(bound),
        **bind_latency_row(latencies),
        "gangs_per_s": round(len(bound) / (finished - started), 1) if bound else 0.0,
        "burst_s": round(finished - started, 2),
        "scheduler_passes": passes,
        "events": events,
        "create_concurrency": concurrency,
        "control_plane_s": round(plane_s, 1),
        "create_nodes_s": round(nodes_s, 1),
        "scheduler_ready_s": round(ready_s, 1),
    }


# -- part 4: a saturated queue on the fake cluster ---------------------------------------------


def pass_bench() -> ModuleType:
    """benches/scheduler_pass_bench.py, whose setup the saturated row shares (imported when
    needed: it brings the runtime and the fake cluster along)."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    import scheduler_pass_bench

    return scheduler_pass_bench


@dataclass
class FullCollections:
    """The garbage collector's full (generation 2) collections while installed: how many and
    how long each took (they stop the event loop, and a process holding 10,000 nodes twice, the
    fake apiserver's copy and the informers', makes each one long)."""

    ms: list[float] = field(default_factory=list)
    _started: float = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.ms.append((time.perf_counter() - self._started) * 1000)

    @contextlib.contextmanager
    def installed(self) -> Iterator[FullCollections]:
        gc.callbacks.append(self)
        try:
            yield self
        finally:
            gc.callbacks.remove(self)

    def figures(self) -> dict[str, Any]:
        return {
            "collections": len(self.ms),
            "ms_total": round(sum(self.ms), 1),
            "ms_max": round(max(self.ms, default=0.0), 1),
        }


SPY_PHASES: tuple[tuple[str, str], ...] = (
    ("Preemptor.", "pass: preemption (its victims read)"),
    ("GroupReader.read", "pass: gangs read (pods, PodGroups)"),
    ("GangBuilder.gang_for", "pass: placer gangs built"),
    ("Reservations.", "pass: reservations"),
    ("Reporter.explanation", "pass: explanations"),
    ("Cycle._unschedulable", "pass: why each gang waits"),
    ("Dispatcher.apply", "pass: decisions dispatched"),
    ("", "pass: other (queue order, placements)"),
)
"""The parts of a pass a py-spy stack is charged to: the first whose fragment is in it."""
SPY_OUTSIDE: tuple[tuple[str, str], ...] = (
    ("Dispatcher._report_waiting", "Events and statuses of waiting gangs"),
    ("Dispatcher.", "binds and other writes"),
    ("crdkit/testing/fake/", "fake apiserver"),
    ("crdkit/runtime/", "informers and the manager"),
    ("", "other (bench, event loop)"),
)


def spy_split(lines: Iterable[str]) -> dict[str, float]:
    """Percent of py-spy's samples (``--format raw``) per part of the work (rounded to 0.1,
    largest first): the placer's worker thread, the parts of a pass (`SPY_PHASES`) and what
    runs between passes (`SPY_OUTSIDE`)."""
    samples: dict[str, int] = {}
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            continue
        innermost = stack.rpartition(";")[2]
        if "epoll_wait" in innermost or (
            "concurrent/futures/thread.py" in stack and "place_all_records" not in stack
        ):
            continue  # idle, as --native sees it: the event loop, the placer's thread pool
        if "gc_collect" in stack:  # seen with --native only
            part = "garbage collector"
        elif "schedule_pass" in stack:
            part = next(name for fragment, name in SPY_PHASES if fragment in stack)
        elif "place_all_records" in stack:
            part = "placer (its worker thread)"
        else:
            part = next(name for fragment, name in SPY_OUTSIDE if fragment in stack)
        samples[part] = samples.get(part, 0) + int(count)
    total = sum(samples.values()) or 1
    ordered = sorted(samples.items(), key=lambda item: (-item[1], item[0]))
    return {part: round(100 * count / total, 1) for part, count in ordered}


@contextlib.contextmanager
def profiling(profile: cProfile.Profile | Path | None, native: bool = False) -> Iterator[None]:
    """For the block: ``profile`` enabled (cProfile), or py-spy sampling this process into the
    file ``profile`` (`_profile_split.record`; ``native``: with C and Rust frames)."""
    if profile is None:
        yield
    elif isinstance(profile, cProfile.Profile):
        profile.enable()
        try:
            yield
        finally:
            profile.disable()
    else:
        spy = _profile_split.record(os.getpid(), profile, native=native)
        time.sleep(1.0)  # py-spy attaches (the scheduler is idle)
        try:
            yield
        finally:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)


async def measure_saturated(
    nodes: int,
    waiting: int,
    sizes: Sequence[int],
    passes: int,
    binds: int,
    profile: cProfile.Profile | Path | None = None,
    native: bool = False,
) -> dict[str, Any]:
    """See the module docstring's ``saturated``; ``profile`` (`profiling`, ``native``) runs for
    the measurement."""
    bench = pass_bench()
    async with bench.saturated(nodes, waiting, sizes=sizes) as state:
        explained = state.scheduler.reporter.explanations
        started = time.perf_counter()
        with profiling(profile, native), FullCollections().installed() as collections:
            placing: list[float] = []
            times = await bench.pass_times(state, passes, placing)
            events = await bench.bind_latencies(state, binds)
        measure_s = time.perf_counter() - started
        explained = state.scheduler.reporter.explanations - explained
        left = len(state.scheduler.queue())
    bound = [event.seconds * 1000 for event in events if event.seconds is not None]

    def ms(seconds: float | None) -> float | None:
        return None if seconds is None else round(seconds * 1000, 1)

    return {
        "nodes": nodes,
        "waiting": waiting,
        "gang_sizes": list(sizes),
        "waiting_pods": sum(gang.size for gang in state.gangs),
        "pass_ms_median": round(statistics.median(times) * 1000, 1) if times else None,
        "pass_ms_max": round(max(times) * 1000, 1) if times else None,
        "passes": len(times),
        "place_ms_median": round(statistics.median(placing) * 1000, 1) if placing else None,
        "bind_ms_median": round(statistics.median(bound), 1) if bound else None,
        "bind_ms_max": round(max(bound), 1) if bound else None,
        "bind_events": len(events),
        "bound": len(bound),
        "bound_within_1s": sum(ms <= 1000 for ms in bound),
        "others_bound": sum(event.others_bound for event in events),
        "bind_ms_by_event": {
            kind: {
                "median": round(statistics.median(values), 1),
                "max": round(max(values), 1),
                "events": len(values),
            }
            for kind in bench.EVENT_KINDS
            if (
                values := [
                    e.seconds * 1000 for e in events if e.kind == kind and e.seconds is not None
                ]
            )
        },
        "binds": [
            {
                "event": event.kind,
                "gang_pods": event.size,
                "ms": ms(event.seconds),
                "passes": event.passes,
                "wake_ms": ms(event.wake_s),
                "pass_ms": ms(event.pass_s),
                "after_pass_ms": ms(event.after_s),
                "writes": event.writes,
            }
            for event in events
        ],
        "explanations": explained,
        "gc_full": collections.figures(),
        "queued_after": left,
        "setup_s": round(state.setup_s, 1),
        "measure_s": round(measure_s, 1),
    }


def profile_saturated(
    path: str, nodes: int, waiting: int, sizes: Sequence[int], passes: int, binds: int
) -> dict[str, Any]:
    """`measure_saturated` at ``nodes`` under cProfile: the pstats file to ``path``, the top 25
    functions by cumulative time to stderr."""
    profile = cProfile.Profile()
    row = asyncio.run(measure_saturated(nodes, waiting, sizes, passes, binds, profile))
    profile.dump_stats(path)
    print(
        f"saturated queue, {nodes} nodes, {waiting} gangs waiting: {passes} passes and "
        f"{row['bind_events']} bind events profiled ({row['measure_s']} s wall)",
        file=sys.stderr,
    )
    pstats.Stats(profile, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
    return {"path": path, **row}


def spy_saturated(
    path: str,
    native: bool,
    nodes: int,
    waiting: int,
    sizes: Sequence[int],
    passes: int,
    binds: int,
) -> dict[str, Any]:
    """`measure_saturated` at ``nodes`` sampled by py-spy: the raw profile to ``path``, the
    split of its samples (`spy_split`) in the row."""
    spy = Path(path)
    row = asyncio.run(measure_saturated(nodes, waiting, sizes, passes, binds, spy, native))
    lines = _profile_split.read_lines(Path(path))
    split = spy_split(lines)
    print(f"py-spy, saturated queue at {nodes} nodes: {split}", file=sys.stderr)
    samples = _profile_split.total_samples(lines)
    return {"path": path, "native": native, "samples": samples, "split_pct": split, **row}


def saturated_rows(
    sizes: Sequence[int], waiting: int, gang_sizes: Sequence[int], passes: int, binds: int
) -> dict[str, Any]:
    rows = {}
    for count in sizes:
        rows[str(count)] = asyncio.run(measure_saturated(count, waiting, gang_sizes, passes, binds))
        gc.collect()
    return rows


# -- part 5: a burst of gangs on an empty cluster, pods bound per second --------------------------


async def _until(done: Callable[[], bool], limit_s: float, what: str) -> None:
    deadline = time.perf_counter() + limit_s
    while not done():
        if time.perf_counter() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.01)


async def measure_throughput(
    nodes: int, gangs: int, sizes: Sequence[int], wait_s: float
) -> dict[str, Any]:
    """See the module docstring's ``throughput``."""
    from crdkit.resources import PodGroup
    from crdkit.scheduling import GangScheduler
    from crdkit.testing import FakeCluster, running_manager

    bench = pass_bench()
    setup_started = time.perf_counter()
    cluster = FakeCluster(kinds=bench.pod_group_kinds("kubernetes"))
    bench.gpu_nodes(cluster, nodes)
    scheduler = GangScheduler(bench.SCHEDULER, [bench.LEAF], pod_groups=("kubernetes",))
    log = bench.PassLog()
    log.install(scheduler)
    burst = bench.waiting_gangs(gangs, sizes, prefix="gang", api="kubernetes", topology=bench.LEAF)
    gang_of = {pod: gang.name for gang in burst for pod in gang.pods}
    pods = [pod for gang in burst for pod in gang.member_pods()]  # built before the clock
    writes = bench.Writes()
    created: dict[str, float] = {}  # per gang: its last pod's create call returned
    async with cluster.client() as client, running_manager(client, scheduler) as manager:
        await _until(lambda: len(scheduler.mirror) >= nodes, wait_s, "the mirror's nodes")
        # As upstream's test: the PodGroups first, and the pods once the scheduler sees them.
        groups = manager.informers.informer(PodGroup).store
        for gang in burst:
            await client.create(gang.podgroup())
        await _until(lambda: len(groups) >= gangs, wait_s, "the scheduler's PodGroups")
        state = bench.Saturated(
            cluster, client, scheduler, burst, log, [], time.perf_counter() - setup_started
        )
        await bench.settle(state)
        passes = scheduler.passes
        unsubscribe = cluster.server.subscribe(writes)
        try:
            with FullCollections().installed() as collections:
                started = time.perf_counter()
                for pod in pods:
                    await client.create(pod)
                    created[gang_of[pod.metadata.name or ""]] = time.perf_counter()
                created_s = time.perf_counter() - started
                with contextlib.suppress(TimeoutError):  # reported as fewer pods bound
                    await _until(lambda: len(writes.bound) >= len(pods), wait_s, "binds")
        finally:
            unsubscribe()
        passes = scheduler.passes - passes
    bound = writes.bound
    finished = max((at for at, _ in bound.values()), default=started)
    last_bind: dict[str, float] = {}
    for pod, (at, _) in bound.items():
        gang = gang_of[pod]
        last_bind[gang] = max(at, last_bind.get(gang, at))
    whole = [g.name for g in burst if all(p in bound for p in g.pods)]
    latencies = [(last_bind[gang] - created[gang]) * 1000 for gang in whole]
    burst_s = finished - started
    return {
        "nodes": nodes,
        "gangs": gangs,
        "gang_sizes": list(sizes),
        "pods": len(pods),
        "bound_pods": len(bound),
        "bound_gangs": len(whole),
        "pods_per_s": round(len(bound) / burst_s, 1) if bound else 0.0,
        "gangs_per_s": round(len(whole) / burst_s, 1) if whole else 0.0,
        "burst_s": round(burst_s, 2),
        "create_s": round(created_s, 2),
        **bind_latency_row(latencies),
        "passes": passes,
        "pass_ms_median": round(statistics.median(log.seconds[-passes:]) * 1000, 1)
        if passes
        else None,
        "pass_ms_max": round(max(log.seconds[-passes:]) * 1000, 1) if passes else None,
        "writes": writes.count,
        "gc_full": collections.figures(),
        "setup_s": round(state.setup_s, 1),
    }


def throughput_rows(
    sizes: Sequence[int], gangs: int, gang_sizes: Sequence[int], wait_s: float
) -> dict[str, Any]:
    rows = {}
    for count in sizes:
        rows[str(count)] = asyncio.run(measure_throughput(count, gangs, gang_sizes, wait_s))
        gc.collect()
    return rows


# -- the run -----------------------------------------------------------------------------------


def loadavg() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


def in_memory(
    sizes: Sequence[int], decisions: int, repeats: int, *, profile: bool = False
) -> dict[str, Any]:
    """Parts 1 and 2, and the memory of the largest mirror (and its profile to stderr)."""
    mirror: dict[str, Any] = {}
    decided: dict[str, Any] = {}
    memory: dict[str, Any] = {}
    for count in sizes:
        state = cluster_state(count)
        mirror[str(count)] = measure_mirror(state, repeats)
        decided[str(count)] = {
            kind: measure_decisions(state, kind, decisions, repeats) for kind in WORKLOADS
        }
        if count == max(sizes):
            memory = measure_memory(state)
            if profile:
                print(profile_mirror(state), file=sys.stderr)
        del state
        gc.collect()
    return {"mirror": mirror, "memory": memory, "decisions": decided}


def node_counts(text: str) -> list[int]:
    values = [int(part) for part in text.split(",") if part.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("expected positive node counts, comma-separated")
    return values


def pod_counts(text: str) -> list[int]:
    values = [int(part) for part in text.split(",") if part.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("expected positive pod counts, comma-separated")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=node_counts, default=[1024, 10000])
    parser.add_argument("--e2e-nodes", type=int, default=1024)
    parser.add_argument("--gangs", type=int, default=100, help="gangs submitted end to end")
    parser.add_argument("--decisions", type=int, default=32, help="gangs per decision workload")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-e2e", action="store_true")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="print a cProfile of the mirror's events at the largest size to stderr",
    )
    parser.add_argument("--e2e-concurrency", type=int, default=16, help="gangs created at once")
    parser.add_argument("--node-concurrency", type=int, default=32, help="node creates at once")
    parser.add_argument("--wait", type=float, default=300.0, help="seconds to wait for binding")
    parser.add_argument(
        "--skip-in-memory", action="store_true", help="leave out the mirror and decisions parts"
    )
    parser.add_argument(
        "--saturated",
        type=node_counts,
        default=None,
        metavar="NODES",
        help="cluster sizes of the saturated-queue row, comma-separated (default: none)",
    )
    parser.add_argument("--waiting", type=int, default=300, help="gangs queued (saturated row)")
    parser.add_argument(
        "--gang-sizes",
        type=pod_counts,
        default=[1, 2, 4],
        help="pods per waiting gang, taken in turn (saturated row)",
    )
    parser.add_argument("--saturated-passes", type=int, default=5, help="passes timed per size")
    parser.add_argument("--bind-events", type=int, default=6, help="capacity events per size")
    parser.add_argument(
        "--saturated-profile",
        metavar="PATH",
        help="profile the saturated row at --profile-nodes: pstats to PATH, top 25 to stderr",
    )
    parser.add_argument(
        "--saturated-py-spy",
        metavar="PATH",
        help="sample the saturated row at --profile-nodes with py-spy: raw stacks to PATH",
    )
    parser.add_argument(
        "--py-spy-native",
        action="store_true",
        help="with --saturated-py-spy: C and Rust frames too (the garbage collector's)",
    )
    parser.add_argument("--profile-nodes", type=int, default=1024)
    parser.add_argument(
        "--throughput",
        type=node_counts,
        default=None,
        metavar="NODES",
        help="cluster sizes of the pods-bound-per-second row, comma-separated (default: none)",
    )
    parser.add_argument(
        "--throughput-gangs", type=int, default=1000, help="gangs in the burst (throughput row)"
    )
    parser.add_argument(
        "--throughput-sizes",
        type=pod_counts,
        default=[4],
        help="pods per gang of the burst, taken in turn (throughput row)",
    )
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.decisions < 1 or args.gangs < 1 or args.e2e_nodes < 1:
        parser.error("--repeats, --decisions, --gangs and --e2e-nodes must be positive")
    if args.waiting < 1 or args.saturated_passes < 1 or args.bind_events < 0:
        parser.error("--waiting and --saturated-passes must be positive, --bind-events >= 0")
    if args.profile_nodes < 1 or args.throughput_gangs < 1:
        parser.error("--profile-nodes and --throughput-gangs must be positive")
    started = time.perf_counter()
    result: dict[str, Any] = {
        "bench": "scheduling",
        "argv": sys.argv[1:] if argv is None else list(argv),
        "cpus": os.cpu_count(),
        "loadavg_start": loadavg(),
    }
    if args.skip_in_memory:
        result.update({"mirror": None, "memory": None, "decisions": None})
    else:
        result.update(in_memory(args.nodes, args.decisions, args.repeats, profile=args.profile))
    saturated = (args.waiting, args.gang_sizes, args.saturated_passes, args.bind_events)
    result["saturated"] = (
        None if args.saturated is None else saturated_rows(args.saturated, *saturated)
    )
    if args.saturated_profile:
        result["saturated_profile"] = profile_saturated(
            args.saturated_profile, args.profile_nodes, *saturated
        )
    if args.saturated_py_spy:
        result["saturated_py_spy"] = spy_saturated(
            args.saturated_py_spy, args.py_spy_native, args.profile_nodes, *saturated
        )
    result["throughput"] = (
        None
        if args.throughput is None
        else throughput_rows(
            args.throughput, args.throughput_gangs, args.throughput_sizes, args.wait
        )
    )
    result["e2e"] = (
        None
        if args.skip_e2e
        else asyncio.run(
            measure_e2e(
                args.e2e_nodes, args.gangs, args.e2e_concurrency, args.node_concurrency, args.wait
            )
        )
    )
    result["loadavg_end"] = loadavg()
    result["wall_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result, indent=2))
    e2e = result["e2e"]
    rows = list((result["saturated"] or {}).values())
    rows += [result[key] for key in ("saturated_profile", "saturated_py_spy") if key in result]
    unbound = any(row["bound"] < row["bind_events"] for row in rows) or any(
        row["bound_pods"] < row["pods"] for row in (result["throughput"] or {}).values()
    )
    return 0 if (e2e is None or e2e["bound_gangs"] == e2e["gangs"]) and not unbound else 1


if __name__ == "__main__":
    sys.exit(main())
