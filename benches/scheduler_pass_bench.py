"""A scheduling pass over a saturated queue: JSON on stdout.

Every node of a simulated GPU cluster is full, and hundreds of single-pod gangs wait (each asks
for a whole 8-GPU node). A capacity event (one more node, too small for any of them) wakes every
waiting gang; the pass places them all (the Rust placer, one batch) and says why each still
waits. The rows with ``explain_refresh_s`` 0 explain every gang again on every pass, as the
scheduler did before it kept explanations whose gang and placer reason had not changed.

    python benches/scheduler_pass_bench.py --nodes 1024 --waiting 600 --passes 5

Runs on the in-memory FakeCluster: it measures the scheduler, not an apiserver. The nodes and
their running pods are stored before the scheduler starts, with their status (``FakeCluster.add``);
the small node of each capacity event is added the same way, in one write. The setup
(`saturated`), the timed passes (`pass_times`) and the binds of the gang at the head of the
queue as capacity frees (`bind_latencies`) are shared with ``scheduling_bench.py --saturated``;
the nodes (`gpu_nodes`), the gangs (`waiting_gangs`, of Kubernetes' own PodGroup too), the
PodGroup kinds (`pod_group_kinds`) and the write listener (`Writes`) with its ``--throughput``.
A pass's time is the scheduler's ``last_pass_seconds`` (wall time, the placer's worker thread
included); only the passes that placed every waiting gang are counted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from crdkit.client import Client
from crdkit.resources import Pod, PodGroup, resource_info
from crdkit.scheduling import GangScheduler
from crdkit.scheduling.groups import GROUP_APIS, PodGroupApi
from crdkit.scheduling.groups.coscheduling import COSCHEDULING_POD_GROUP_LABEL, CoschedulingPodGroup
from crdkit.testing import FakeCluster, FakeKind, running_manager
from crdkit.testing.fake.server import WatchRecord
from crdkit.testing.sim.nodes import simulated_node

LEAF = "topology.crdkit.io/leaf"
SCHEDULER = "gangs"
NAMESPACE = "ml"
SMALL_NODE = {"cpu": "4", "pods": "10"}
"""A node too small for any waiting gang: capacity grew, nothing fits."""


def gpu_pod(
    name: str,
    node: str | None = None,
    memory_mi: int | None = None,
    group: str | None = None,
    api: PodGroupApi = "coscheduling",
) -> Pod:
    """A pod of 8 GPUs (a whole node), bound to ``node`` when given, in the PodGroup ``group``
    of ``api`` when given (the coscheduling label, or Kubernetes' ``spec.schedulingGroup``;
    else a gang of one)."""
    requests = {"nvidia.com/gpu": "8"}
    if memory_mi is not None:
        requests["memory"] = f"{memory_mi}Mi"
    spec: dict[str, Any] = {
        "schedulerName": SCHEDULER,
        "containers": [{"name": "c", "resources": {"requests": requests}}],
    }
    if node is not None:
        spec["nodeName"] = node
    metadata: dict[str, Any] = {"name": name, "namespace": NAMESPACE}
    if group is not None and api == "kubernetes":
        spec["schedulingGroup"] = {"podGroupName": group}
    elif group is not None:
        metadata["labels"] = {COSCHEDULING_POD_GROUP_LABEL: group}
    return Pod.model_validate({"metadata": metadata, "spec": spec})


def pod_group_kinds(api: PodGroupApi) -> list[FakeKind]:
    """The kinds the scheduler watches for ``api``, as the fake cluster serves them: its
    PodGroup (with its CRD's status subresource, or as kube-apiserver serves a built-in one) and
    the companion it reads its policy from (Kubernetes' Workload)."""
    adapter = GROUP_APIS[api]
    assert adapter.model is not None
    if adapter.crd_file is None:
        kind = FakeKind(resource_info(adapter.model), True, tracks_generation=True)
    else:
        kind = FakeKind.of_crd(adapter.model, status_subresource=adapter.status_subresource)
    companion = adapter.companion
    if companion is None:
        return [kind]
    return [kind, FakeKind(resource_info(companion), False, True, has_status=False)]


def gpu_nodes(cluster: FakeCluster, count: int) -> list[str]:
    """Store ``count`` empty 8-GPU nodes, Ready, in leaves of 16 (labelled `LEAF`); their
    names."""
    names = [f"n{i:05}" for i in range(count)]
    for i, name in enumerate(names):
        cluster.add(simulated_node(name, labels={LEAF: f"l{i // 16}"}))  # with its status
    return names


@dataclass
class Gang:
    """A gang: its name (its PodGroup's, or its only pod's) and its pods' names; its PodGroup's
    API and, for Kubernetes' PodGroup, the node label all its pods must share (``topology``)."""

    name: str
    pods: list[str]
    memory_mi: int | None = None
    api: PodGroupApi = "coscheduling"
    topology: str | None = None

    @property
    def size(self) -> int:
        return len(self.pods)

    def podgroup(self) -> Any:
        """Its PodGroup, all its pods its minimum: a coscheduling one (``minMember``), or
        Kubernetes' (``gang.minCount``, and ``topology`` as its one topology constraint)."""
        metadata = {"name": self.name, "namespace": NAMESPACE}
        if self.api == "coscheduling":
            spec: dict[str, Any] = {"minMember": self.size}
            return CoschedulingPodGroup.model_validate({"metadata": metadata, "spec": spec})
        assert self.api == "kubernetes", self.api
        spec = {"schedulingPolicy": {"gang": {"minCount": self.size}}}
        if self.topology is not None:
            spec["schedulingConstraints"] = {"topology": [{"key": self.topology}]}
        return PodGroup.model_validate({"metadata": metadata, "spec": spec})

    def member_pods(self) -> list[Pod]:
        return [
            gpu_pod(p, memory_mi=self.memory_mi, group=self.name, api=self.api) for p in self.pods
        ]

    def objects(self) -> list[Any]:
        """What is created for it: a coscheduling gang of one is a plain pod; any other its
        PodGroup and its pods."""
        if self.size == 1 and self.api == "coscheduling":
            return [gpu_pod(self.name, memory_mi=self.memory_mi)]
        return [self.podgroup(), *self.member_pods()]


def waiting_gangs(
    count: int,
    sizes: Sequence[int] = (1,),
    alike: bool = True,
    *,
    prefix: str = "waiting",
    api: PodGroupApi = "coscheduling",
    topology: str | None = None,
) -> list[Gang]:
    """``count`` gangs of ``api``, their sizes taken from ``sizes`` in turn; named in arrival
    order (ties of creationTimestamp are served by name). Not ``alike``: gang ``i`` also asks
    ``i + 1`` MiB of memory per pod, so no two share an answer."""
    gangs = []
    for i in range(count):
        name, size = f"{prefix}-{i:05}", sizes[i % len(sizes)]
        single = size == 1 and api == "coscheduling"
        pods = [name] if single else [f"{name}-{j}" for j in range(size)]
        gangs.append(Gang(name, pods, None if alike else i + 1, api, topology))
    return gangs


@dataclass
class PassLog:
    """Every pass the scheduler ran: its wall seconds, when it started and ended
    (perf_counter), how many gangs it placed (0: none; a pass woken by a capacity event places
    every waiting gang) and how many pods it sent to be bound (the mirror's assumptions)."""

    seconds: list[float] = field(default_factory=list)
    gangs: list[int] = field(default_factory=list)
    placing: list[float] = field(default_factory=list)
    """The wall seconds of the pass's ``place_all_records_async`` (the placer's worker thread,
    and what the event loop ran meanwhile)."""
    assumed: list[int] = field(default_factory=list)
    started: list[float] = field(default_factory=list)
    ended: list[float] = field(default_factory=list)

    def install(self, scheduler: GangScheduler) -> None:
        """Wrap the scheduler's ``schedule_pass`` and its mirror's ``place_all_records_async`` and
        ``assume_pod``."""
        mirror = scheduler.mirror
        run_pass, place_all, assume = (
            scheduler.schedule_pass,
            mirror.place_all_records_async,
            mirror.assume_pod,
        )
        placed, assumed, placing = [0], [0], [0.0]

        async def place(gangs: Any, *args: Any, **kwargs: Any) -> Any:
            gangs = list(gangs)
            placed[0] = len(gangs)
            started = time.perf_counter()
            try:
                return await place_all(gangs, *args, **kwargs)
            finally:
                placing[0] += time.perf_counter() - started

        def assume_pod(*args: Any, **kwargs: Any) -> Any:
            assumed[0] += 1
            return assume(*args, **kwargs)

        async def schedule_pass() -> None:
            placed[0] = assumed[0] = 0
            placing[0] = 0.0
            started = time.perf_counter()
            await run_pass()
            self.ended.append(time.perf_counter())
            self.started.append(started)
            self.seconds.append(scheduler.last_pass_seconds)
            self.gangs.append(placed[0])
            self.placing.append(placing[0])
            self.assumed.append(assumed[0])

        mirror.place_all_records_async = place  # type: ignore[method-assign]
        mirror.assume_pod = assume_pod  # type: ignore[method-assign]
        scheduler.schedule_pass = schedule_pass  # type: ignore[method-assign]


@dataclass
class Saturated:
    """A running scheduler over a full cluster with ``gangs`` waiting (see `saturated`)."""

    cluster: FakeCluster
    client: Client
    scheduler: GangScheduler
    gangs: list[Gang]
    log: PassLog
    running: list[str]
    """The pods filling the nodes (one per node), in the order `bind_latencies` frees them."""
    setup_s: float
    added: int = 0
    """Nodes added so far (small ones and whole ones)."""


async def settle(state: Saturated, since: int | None = None, limit_s: float = 300.0) -> None:
    """Wait for a pass after the ``since``-th (if given) and then for the scheduler to stay idle
    for 50 ms (no pass, bind or write in flight, nothing due) and past the pause after its last
    pass (``pass_pause`` times that pass's duration), so that the next event wakes a pass at
    once."""
    deadline = time.perf_counter() + limit_s
    while since is not None and len(state.log.seconds) <= since:
        if time.perf_counter() > deadline:
            raise TimeoutError("no scheduling pass came")
        await asyncio.sleep(0.005)
    quiet = 0
    while quiet < 5:
        if time.perf_counter() > deadline:
            raise TimeoutError("the scheduler did not settle")
        await asyncio.sleep(0.01)
        log, scheduler = state.log, state.scheduler
        paused = bool(log.ended) and (
            time.perf_counter() - log.ended[-1] < scheduler.pass_pause * log.seconds[-1] + 0.01
        )
        quiet = quiet + 1 if scheduler.idle and not paused else 0


@asynccontextmanager
async def saturated(
    nodes: int,
    waiting: int,
    *,
    refresh: float = 10.0,
    alike: bool = True,
    sizes: Sequence[int] = (1,),
) -> AsyncIterator[Saturated]:
    """``nodes`` 8-GPU nodes (leaves of 16), each full with one running pod, stored before the
    scheduler starts (as a list hands them over); a `GangScheduler` on a `Manager`; then
    ``waiting`` gangs (`waiting_gangs`) created through the API, yielded once every one of them
    is in the queue and the scheduler is idle."""
    started = time.perf_counter()
    many = max(sizes) > 1
    cluster = FakeCluster(kinds=pod_group_kinds("coscheduling") if many else [])
    running = []
    for i, name in enumerate(gpu_nodes(cluster, nodes)):
        cluster.add(gpu_pod(f"running-{i}", node=name))  # the node is full
        running.append(f"running-{i}")
    scheduler = GangScheduler(
        SCHEDULER,
        [LEAF],
        pod_groups=("coscheduling",) if many else (),
        explain_refresh=refresh,
        # First come, first served: `bind_latencies` frees exactly the room of the gang at the
        # head of the line, which then is the first created, whatever its size. With the size
        # credit the head is the biggest gang, and smaller ones rightly backfill the nodes as
        # they free one by one, outside its reservation.
        size_credit=0.0,
    )
    log = PassLog()
    log.install(scheduler)
    async with cluster.client() as client, running_manager(client, scheduler):
        gangs = waiting_gangs(waiting, sizes, alike)
        for gang in gangs:
            for obj in gang.objects():
                await client.create(obj)
        deadline = time.perf_counter() + 600
        while len(scheduler.queue()) < waiting:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"{len(scheduler.queue())} of {waiting} gangs queued")
            await asyncio.sleep(0.05)
        state = Saturated(
            cluster, client, scheduler, gangs, log, running, time.perf_counter() - started
        )
        await settle(state)
        if scheduler.bound_gangs:
            raise AssertionError(f"{scheduler.bound_gangs} gangs bound on a full cluster")
        yield state


async def pass_times(
    state: Saturated, passes: int, placing: list[float] | None = None
) -> list[float]:
    """``passes`` capacity events that let no gang in (a node too small for any, added in one
    write, status included); the seconds of each pass that placed every waiting gang (and, into
    ``placing``, the seconds of each one's ``place_all_records_async``)."""
    times = []
    for _ in range(passes):
        mark = len(state.log.seconds)
        queued = len(state.scheduler.queue())
        state.added += 1
        state.cluster.add(simulated_node(f"small-{state.added:05}", allocatable=SMALL_NODE))
        await settle(state, since=mark)
        log = state.log
        full = [i for i in range(mark, len(log.seconds)) if log.gangs[i] >= queued]
        times += [log.seconds[i] for i in full]
        if placing is not None:
            placing += [log.placing[i] for i in full]
    return times


def _phase(pod: dict[str, Any]) -> str | None:
    return (pod.get("status") or {}).get("phase")


def _node(pod: dict[str, Any]) -> str | None:
    return (pod.get("spec") or {}).get("nodeName")


@dataclass
class Writes:
    """When (perf_counter) the fake apiserver stored each write the bind events look at, and
    how many writes it had stored by then (``count``: every write, of any kind)."""

    count: int = 0
    deleted: dict[str, tuple[float, int]] = field(default_factory=dict)
    finished: dict[str, tuple[float, int]] = field(default_factory=dict)
    nodes: dict[str, tuple[float, int]] = field(default_factory=dict)
    bound: dict[str, tuple[float, int]] = field(default_factory=dict)

    def __call__(self, record: WatchRecord) -> None:
        now = time.perf_counter()
        self.count += 1
        name = record.obj["metadata"]["name"]
        kind = record.kind.info.kind
        if kind == "Node" and record.type == "ADDED":
            self.nodes[name] = (now, self.count)
        elif kind != "Pod" or record.kind.info.group:
            return
        elif record.type == "DELETED":
            self.deleted[name] = (now, self.count)
        elif record.type == "MODIFIED":
            after, before = record.obj, record.previous or {}
            if _phase(after) == "Succeeded" != _phase(before):
                self.finished[name] = (now, self.count)
            elif _node(after) and not _node(before):
                self.bound[name] = (now, self.count)


@dataclass
class BindEvent:
    """One capacity event for the gang at the head of the queue."""

    kind: str
    """One of `EVENT_KINDS`: as many running pods as the gang has pods deleted at once
    (``pod_deleted``) or reported ``Succeeded`` at once (``pod_succeeded``), or as many whole
    nodes added, each in one write (``node_added``)."""
    gang: str
    size: int
    seconds: float | None
    """From the last freeing write to the last bind of the gang's pods (None: not bound)."""
    passes: int
    """Passes from the freeing to the bind (or the timeout)."""
    others_bound: int
    """Pods of other gangs bound meanwhile (the head should get the room)."""
    wake_s: float | None = None
    """From the freeing to the start of the first pass after it."""
    pass_s: float | None = None
    """The pass that placed the gang (the first after the freeing to send pods to be bound)."""
    after_s: float | None = None
    """From that pass's end to the gang's last bind."""
    writes: int | None = None
    """Writes the apiserver stored between the freeing and the last bind (those binds too)."""


EVENT_KINDS = ("pod_deleted", "node_added", "pod_succeeded")
"""The capacity events of `bind_latencies`, in turn."""


async def bind_latencies(state: Saturated, events: int, limit_s: float = 60.0) -> list[BindEvent]:
    """``events`` capacity events, each of `EVENT_KINDS` in turn, each exactly the room the gang
    at the head of the queue needs: running pods deleted (grace period 0, as once a kubelet
    confirms the stop), nodes added, or running pods reported ``Succeeded`` (a status write, as
    a kubelet's); each timed from the write that completes the room to its last pod's bind.

    On the fake cluster a delete also runs its garbage collector, a scan of every object, on
    the event loop right after the delete is stored (about 50 ms at 10,000 nodes): it delays the
    scheduler's wake-up after ``pod_deleted``, as ``pod_succeeded`` does not."""
    writes = Writes()
    unsubscribe = state.cluster.server.subscribe(writes)
    by_name = {gang.name: gang for gang in state.gangs}
    log = state.log
    results = []
    try:
        for index in range(events):
            queue = state.scheduler.queue()
            if not queue:
                break
            head = by_name[queue[0][0].rsplit("/", 1)[1]]
            passes, bound, mark = state.scheduler.passes, set(writes.bound), len(log.ended)
            kind = EVENT_KINDS[index % len(EVENT_KINDS)]
            if kind != "node_added" and len(state.running) < head.size:
                kind = "node_added"  # no running pods left to end
            if kind != "node_added":
                freed, state.running = state.running[: head.size], state.running[head.size :]
                if kind == "pod_deleted":
                    writing = [
                        state.client.delete(Pod, p, namespace=NAMESPACE, grace_period_seconds=0)
                        for p in freed
                    ]
                else:
                    succeeded = {"status": {"phase": "Succeeded"}}
                    writing = [
                        state.client.patch(
                            Pod, p, succeeded, namespace=NAMESPACE, subresource="status"
                        )
                        for p in freed
                    ]
                await asyncio.gather(*writing)
                written = writes.deleted if kind == "pod_deleted" else writes.finished
                freed_at, freed_count = max(written[p] for p in freed)
            else:
                names = []
                for _ in range(head.size):
                    state.added += 1
                    names.append(f"added-{state.added:05}")
                    state.cluster.add(simulated_node(names[-1], labels={LEAF: "added"}))
                freed_at, freed_count = max(writes.nodes[n] for n in names)
            deadline = time.perf_counter() + limit_s
            while not all(p in writes.bound for p in head.pods):
                if time.perf_counter() > deadline:
                    break
                await asyncio.sleep(0.001)
            event = BindEvent(kind, head.name, head.size, None, state.scheduler.passes - passes, 0)
            event.others_bound = len(set(writes.bound) - bound - set(head.pods))
            results.append(event)
            if not all(p in writes.bound for p in head.pods):
                break  # the same gang would be the head again
            last, last_count = max(writes.bound[p] for p in head.pods)
            first = min(writes.bound[p][0] for p in head.pods)
            event.seconds, event.writes = last - freed_at, last_count - freed_count
            after = [i for i in range(mark, len(log.ended)) if log.started[i] >= freed_at]
            if after:
                event.wake_s = log.started[after[0]] - freed_at
            placing = [i for i in after if log.assumed[i] and log.ended[i] <= first][:1]
            if placing:
                event.pass_s = log.seconds[placing[-1]]
                event.after_s = last - log.ended[placing[-1]]
            await settle(state)
    finally:
        unsubscribe()
    return results


async def measure(
    nodes: int, waiting: int, passes: int, refresh: float, alike: bool = True
) -> dict[str, Any]:
    """``alike``: every waiting gang asks the same; otherwise each asks a different amount of
    memory, so no two share an answer."""
    async with saturated(nodes, waiting, refresh=refresh, alike=alike) as state:
        explained = state.scheduler.reporter.explanations
        times = await pass_times(state, passes)
        explained = state.scheduler.reporter.explanations - explained
    return {
        "nodes": nodes,
        "waiting": waiting,
        "explain_refresh_s": refresh,
        "gangs": "alike" if alike else "all different",
        "pass_ms_median": round(statistics.median(times) * 1e3, 1),
        "pass_ms_max": round(max(times) * 1e3, 1),
        "passes_measured": len(times),
        "explanations_in_measured_passes": explained,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--waiting", type=int, default=600)
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = [
        asyncio.run(measure(args.nodes, args.waiting, args.passes, refresh, alike))
        for refresh in (10.0, 0.0)
        for alike in (True, False)
    ]
    print(
        json.dumps(
            {
                "bench": "scheduler_pass",
                "rows": rows,
                "seconds": round(time.perf_counter() - started),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
