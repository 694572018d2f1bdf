"""Crash consistency of ``GangScheduler`` on a real apiserver (crdkit.testing.crashes).

The scheduler runs in-process on a pool of simulated 8-GPU nodes in two racks, with each
PodGroup API: Volcano's and coscheduling's CRDs, and Kubernetes' own PodGroup on a plane
started with its feature gates; the workload plays the users, the pods' controller and the
kubelet: it creates PodGroups and their pods
(named as Kubeflow's training-operator names them, made again under the same name when the
scheduler deletes them), reports a gang's pods ``Succeeded`` once the whole gang is bound,
and deletes finished pods at the end (their TTL). Each gang needs a whole rack
(``default_topology``), so one of three gangs must wait. The explorer kills the scheduler
before or after each of its writes (binds, PodGroup status, preemption's marks and deletes),
loses answers, hides watch events and restarts it on stale caches; every run is judged by
the end state of the fault-free run and by the invariants below, over what the apiserver went
through:

- ``no_pod_bound_twice``: a pod (one uid) is bound to one node, ever;
- ``no_partial_gang_left``: when the run is over no gang is partly bound; that a gang partly
  bound at the crash is completed or rolled back within a bound is the run's ``timeout``: the
  workload only ends once every gang ran whole;
- ``evictions_take_whole_gangs``: a bound, unfinished pod deleted (a rollback or a preemption)
  takes every other bound pod of its gang with it, and a pod marked ``DisruptionTarget`` goes;
- ``no_hold_in_finished_status``: no finished gang's PodGroup still says it holds or is held
  room; and the run is quiet only once the live scheduler holds no reservation (holds are
  in-memory: nothing else of them is persisted).

Events are not explored (the kit's default ``ignored``): a crash between two Events changes
nothing a restarted scheduler reads. Every case runs the whole scenario against the apiserver
(a few seconds each), so exploring every write with every fault kind takes longer than a test
should: each test explores a seeded sample of at most `SAMPLE` cases, the same sample every time;
``--crash-budget=0`` (or ``CRDKIT_CRASH_BUDGET=0``) explores them all, and
``--crash-case=kind:k`` reruns one.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pytest
import pytest_asyncio
from _cluster import LEVELS, POOL, RACK, make_nodes, new_pool
from _crash_pool import PoolTarget, finish

import factories
from crdkit.client import AlreadyExists, Client, Conflict, NotFound, Preconditions
from crdkit.resources import Pod, PodGroup
from crdkit.runtime.manager import Manager
from crdkit.scheduling import GangScheduler
from crdkit.scheduling.groups import PodGroupApi
from crdkit.scheduling.groups.coscheduling import CoschedulingPodGroup
from crdkit.scheduling.groups.volcano import VolcanoPodGroup
from crdkit.testing import ControlPlane
from crdkit.testing.crashes import (
    CrashCase,
    CrashExplorer,
    CrashReport,
    FaultKind,
    History,
    HistoryEvent,
    Scenario,
    Write,
)
from crdkit.testing.sim.managers import virtual_clock_manager

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]

JOB = "crash.crdkit.io/job"
MEMBER = "crash.crdkit.io/member"
SAMPLE = 40
"""The most cases a test explores (``--crash-budget`` / ``CRDKIT_CRASH_BUDGET`` override it)."""


# -- the workload ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Gang:
    """A job of ``size`` 8-GPU pods (a master and workers) in one PodGroup. It is created once
    the gangs of ``after`` were bound whole, and its pods finish once it is bound whole and
    the gangs of ``finish_after`` have finished."""

    name: str
    size: int
    priority_class: str | None = None
    after: tuple[str, ...] = ()
    finish_after: tuple[str, ...] = ()

    def members(self) -> list[str]:
        return ["master-0", *(f"worker-{i}" for i in range(self.size - 1))]


GROUP_KINDS: dict[PodGroupApi, type[Any]] = {
    "volcano": VolcanoPodGroup,
    "coscheduling": CoschedulingPodGroup,
    "kubernetes": PodGroup,
}


def podgroup(
    api: PodGroupApi, gang: Gang, namespace: str
) -> VolcanoPodGroup | CoschedulingPodGroup | PodGroup:
    if api == "volcano":
        return factories.volcano_podgroup(
            gang.name, gang.size, namespace=namespace, queue="default"
        )
    if api == "kubernetes":  # the rack comes from the scheduler's default topology, as above
        return factories.kubernetes_podgroup(gang.name, gang.size, namespace=namespace)
    return factories.coscheduling_podgroup(
        gang.name, gang.size, namespace=namespace, scheduleTimeoutSeconds=60
    )


def gang_pod(
    api: PodGroupApi, gang: Gang, member: str, namespace: str, scheduler: str
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if gang.priority_class is not None:
        spec["priorityClassName"] = gang.priority_class
    return factories.pod_json(
        f"{gang.name}-{member}",
        namespace=namespace,
        labels={JOB: gang.name, MEMBER: member},
        pod_group=(api, gang.name),
        scheduler=scheduler,
        image="registry.k8s.io/pause:3.10",
        gpus=8,
        limits={"nvidia.com/gpu": "8"},
        **spec,
    )


def live(pod: Pod) -> bool:
    return pod.metadata.deletion_timestamp is None


def make_workload(api: PodGroupApi, gangs: Sequence[Gang], scheduler: str) -> Any:
    async def workload(client: Client, namespace: str) -> None:
        created: set[str] = set()
        whole: set[str] = set()
        finished: set[str] = set()
        while len(finished) < len(gangs):
            listed = (await client.list(Pod, namespace=namespace)).items
            for pod in listed:
                if not live(pod):  # the kubelet: its containers stopped, the pod goes
                    with contextlib.suppress(NotFound, Conflict):
                        await client.delete(
                            Pod,
                            pod.metadata.name or "",
                            namespace=namespace,
                            grace_period_seconds=0,
                            preconditions=Preconditions(uid=pod.metadata.uid),
                        )
            pods = [p for p in listed if live(p)]
            for gang in gangs:
                if gang.name in finished:
                    continue
                if gang.name not in created:
                    if all(other in whole for other in gang.after):
                        await client.create(podgroup(api, gang, namespace))
                        for member in gang.members():
                            await client.create(gang_pod(api, gang, member, namespace, scheduler))  # type: ignore[call-overload]
                        created.add(gang.name)
                    continue
                mine = [p for p in pods if (p.metadata.labels or {}).get(JOB) == gang.name]
                have = {(p.metadata.labels or {}).get(MEMBER) for p in mine}
                missing = [m for m in gang.members() if m not in have]
                for member in missing:  # what the pods' controller does: make them again
                    with contextlib.suppress(AlreadyExists):  # the old one is still going
                        await client.create(gang_pod(api, gang, member, namespace, scheduler))  # type: ignore[call-overload]
                if missing or not all(p.spec.node_name for p in mine):
                    continue
                whole.add(gang.name)
                if all(other in finished for other in gang.finish_after) and await finish(
                    client, mine
                ):
                    finished.add(gang.name)
            await asyncio.sleep(0.2)
        # The jobs are done; their pods go (a Job's ttlSecondsAfterFinished).
        for pod in (await client.list(Pod, namespace=namespace)).items:
            if pod.status is not None and pod.status.phase == "Succeeded":
                await client.delete(Pod, pod.metadata.name or "", namespace=namespace)

    return workload


# -- the invariants --------------------------------------------------------------------------


def _pods(history: History) -> Iterable[tuple[int, str, dict[str, Any]]]:
    for index, event in enumerate(history.events):
        if event.kind == "Pod":
            yield index, event.type, event.obj


def _job(pod: dict[str, Any]) -> str:
    return str(((pod.get("metadata") or {}).get("labels") or {}).get(JOB))


def _uid(pod: dict[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("uid"))


def _node(pod: dict[str, Any]) -> str | None:
    node = (pod.get("spec") or {}).get("nodeName")
    return str(node) if node else None


def _phase(pod: dict[str, Any]) -> str | None:
    phase = (pod.get("status") or {}).get("phase")
    return str(phase) if phase else None


def _name(pod: dict[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("name"))


def no_pod_bound_twice(history: History) -> list[str]:
    bound: dict[str, str] = {}
    problems = []
    for _, _, pod in _pods(history):
        node = _node(pod)
        if node is None:
            continue
        first = bound.setdefault(_uid(pod), node)
        if first != node:
            problems.append(f"pod {_name(pod)} was bound to {first}, then to {node}")
    return problems


def no_partial_gang_left(history: History) -> list[str]:
    """At the end no gang has some of its unfinished pods bound and others not."""
    by_job: dict[str, list[dict[str, Any]]] = {}
    for pod in history.end_state:
        if pod.get("kind") == "Pod" and _phase(pod) not in ("Succeeded", "Failed"):
            by_job.setdefault(_job(pod), []).append(pod)
    problems = []
    for job, pods in sorted(by_job.items()):
        bound = [_name(p) for p in pods if _node(p)]
        if bound and len(bound) < len(pods):
            problems.append(f"gang {job} is left partly bound: {sorted(bound)} of {len(pods)}")
    return problems


def evictions_take_whole_gangs(history: History) -> list[str]:
    """A bound, unfinished pod deleted takes the others of its gang bound then with it (all of
    them deleted by the end); a pod marked ``DisruptionTarget`` is deleted."""
    alive: dict[str, dict[str, Any]] = {}
    deleted: set[str] = set()
    owed: dict[str, tuple[str, set[str]]] = {}  # the first evicted pod → its gang's others
    marked: dict[str, str] = {}
    for _, kind, pod in _pods(history):
        uid = _uid(pod)
        if kind == "DELETED":
            alive.pop(uid, None)
            deleted.add(uid)
            if _node(pod) and _phase(pod) not in ("Succeeded", "Failed"):
                others = {
                    other_uid
                    for other_uid, other in alive.items()
                    if _job(other) == _job(pod)
                    and _node(other)
                    and _phase(other) not in ("Succeeded", "Failed")
                }
                owed.setdefault(uid, (f"{_job(pod)} ({_name(pod)})", others))
            continue
        alive[uid] = pod
        conditions = (pod.get("status") or {}).get("conditions") or []
        if any(c.get("type") == "DisruptionTarget" for c in conditions):
            marked[uid] = _name(pod)
    problems = []
    for gang, others in owed.values():
        kept = others - deleted
        if kept:
            problems.append(
                f"gang {gang} lost a bound pod, but {len(kept)} other bound pod(s) of it stayed"
            )
    for uid, name in sorted(marked.items()):
        if uid not in deleted:
            problems.append(f"pod {name} was marked DisruptionTarget and never evicted")
    return problems


def no_hold_in_finished_status(history: History) -> list[str]:
    """No PodGroup whose pods all finished still says it is waiting on held room."""
    finished_jobs: dict[str, bool] = {}
    for _, kind, pod in _pods(history):
        if kind != "DELETED":
            done = _phase(pod) in ("Succeeded", "Failed")
            finished_jobs[_job(pod)] = finished_jobs.get(_job(pod), True) and done
    problems = []
    for obj in history.end_state:
        if obj.get("kind") == "Pod":
            continue
        name = _name(obj)
        text = str(obj.get("status") or {})
        if finished_jobs.get(name) and ("held" in text or "reserved" in text):
            problems.append(f"the finished gang {name}'s status still speaks of held room: {text}")
    return problems


INVARIANTS = (
    no_pod_bound_twice,
    no_partial_gang_left,
    evictions_take_whole_gangs,
    no_hold_in_finished_status,
)


# -- the scenario ----------------------------------------------------------------------------


@dataclass
class Schedulers:
    """The scheduler of each incarnation the explorer started, the live one last."""

    made: list[GangScheduler]

    def factory(self, api: PodGroupApi, pool: str) -> Any:
        def build(client: Client, namespace: str) -> Manager:
            manager = virtual_clock_manager(client)
            scheduler = GangScheduler(
                f"sched-{pool}",
                LEVELS,
                node_selector=f"{POOL}={pool}",
                pod_groups=(api,),
                default_topology={"mode": "required", "level": RACK},
            )
            manager.add_runnable(scheduler)
            self.made.append(scheduler)
            return manager

        return build

    async def holding_nothing(self, client: Client, namespace: str) -> bool:
        """Quiet only once the live scheduler holds no room (every gang has run)."""
        return not self.made or not self.made[-1].reservations


async def priority_class(client: Client, name: str, value: int) -> None:
    body = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }
    await client.create(body)  # type: ignore[call-overload]


def scenario(
    api: PodGroupApi,
    pool: str,
    gangs: Sequence[Gang],
    schedulers: Schedulers,
    recreatable: frozenset[str] = frozenset(),
) -> Scenario:
    kind = GROUP_KINDS[api]
    return Scenario(
        operator=schedulers.factory(api, pool),
        workload=make_workload(api, gangs, f"sched-{pool}"),
        kinds=[Pod, kind],
        settle=2.0,
        timeout=120.0,
        quiet=schedulers.holding_nothing,
        invariants=INVARIANTS,
        recreatable=recreatable,
    )


async def explore(
    plane: ControlPlane,
    api: PodGroupApi,
    racks: dict[str, int],
    gangs: Sequence[Gang],
    *,
    priorities: dict[str, int] | None = None,
    cases: Sequence[str] | None = None,
    seed: int = 43,
    aim: tuple[FaultKind, str] | None = None,
    recreatable: frozenset[str] = frozenset(),
) -> tuple[CrashReport, float]:
    """Explore the scenario; ``aim``: only the fault on the fault-free run's write of that
    description (``create pods/binding <namespace>/a-worker-2``), wherever it falls."""
    pool = new_pool()
    async with Client.from_control_plane(plane) as client:
        await make_nodes(client, pool, racks)
        for name, value in (priorities or {}).items():
            await priority_class(client, f"{pool}-{name}", value)
    named = [
        Gang(
            g.name,
            g.size,
            f"{pool}-{g.priority_class}" if g.priority_class else None,
            g.after,
            g.finish_after,
        )
        for g in gangs
    ]
    kind = GROUP_KINDS[api]
    explorer = CrashExplorer(
        scenario(api, pool, named, Schedulers([]), recreatable),
        PoolTarget(plane, pool, [kind]),
        max_cases=SAMPLE,
        seed=seed,
        cases=cases,
    )
    started = time.monotonic()
    if aim is None:
        report = await explorer.explore()
    else:
        baseline = await explorer.record()
        kind, described = aim
        write = next(w for w in baseline.writes if described == _described(w))
        report = CrashReport(
            baseline, [await explorer.run_case(CrashCase(kind, write.index), baseline)]
        )
    return report, time.monotonic() - started


def _described(write: Write) -> str:
    return str(replace(write, namespace="<namespace>" if write.namespace else None))


THREE_GANGS = [Gang("a", 4), Gang("b", 4), Gang("c", 4)]
"""Two racks of 4 nodes; three gangs of a rack each: one waits for a rack to finish."""

PREEMPTION = [
    Gang("low1", 2, "low", finish_after=("high",)),
    Gang("low2", 2, "low", finish_after=("high",)),
    Gang("high", 2, "high", after=("low1", "low2")),
]
"""Two racks of 2 nodes held by two low-priority gangs until a high-priority one comes: it
preempts one of them whole, and the victim's pods (made again) wait for it to finish."""


def _report(report: CrashReport, seconds: float) -> str:
    writes = "; ".join(str(w) for w in report.baseline.writes)
    return f"{report.summary()}\n  in {seconds:.0f}s\n  writes: {writes}"


@pytest.mark.parametrize("api", ["volcano", "coscheduling"])
async def test_three_gangs_on_two_racks_survive_every_crash(
    scheduling_plane: ControlPlane, api: PodGroupApi
) -> None:
    report, seconds = await explore(scheduling_plane, api, {"a": 4, "b": 4}, THREE_GANGS)
    print(_report(report, seconds))
    report.raise_on_failure()
    assert any(w.resource == "pods/binding" for w in report.baseline.writes)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def gated_plane() -> AsyncIterator[ControlPlane]:
    """A kube-apiserver serving Kubernetes' own PodGroup (``scheduling.k8s.io/v1beta1``)."""
    async with ControlPlane(workload_api=True) as plane:
        yield plane


async def test_three_kubernetes_podgroups_on_two_racks_survive_every_crash(
    gated_plane: ControlPlane,
) -> None:
    report, seconds = await explore(gated_plane, "kubernetes", {"a": 4, "b": 4}, THREE_GANGS)
    print(_report(report, seconds))
    report.raise_on_failure()
    assert any(w.resource == "pods/binding" for w in report.baseline.writes)
    assert any(w.resource == "podgroups.scheduling.k8s.io/status" for w in report.baseline.writes)


async def test_a_lost_answer_to_a_bind_that_landed_keeps_the_gang_bound_whole(
    scheduling_plane: ControlPlane,
) -> None:
    # lost-response:10 (the last bind of gang a): the bind was applied, its answer lost. The
    # binder took it for a failure and rolled back the three other pods, leaving a-worker-2
    # bound alone until the scheduler adopted it; the pods were deleted for nothing.
    report, _ = await explore(
        scheduling_plane,
        "volcano",
        {"a": 4, "b": 4},
        THREE_GANGS,
        aim=("lost-response", "create pods/binding <namespace>/a-worker-2"),
    )
    report.raise_on_failure()
    assert [r.outcome for r in report.results] == ["passed"]


async def test_a_preempted_gang_is_evicted_whole_across_crashes(
    scheduling_plane: ControlPlane,
) -> None:
    report, seconds = await explore(
        scheduling_plane,
        "volcano",
        {"a": 2, "b": 2},
        PREEMPTION,
        priorities={"low": 10, "high": 1000},
        # Victims are deleted for their controller to make again; which gang a restarted
        # scheduler evicts is the finding pinned below, not what this test judges.
        recreatable=frozenset({"Pod"}),
    )
    print(_report(report, seconds))
    report.raise_on_failure()
    assert any(w.verb == "delete" and w.resource == "pods" for w in report.baseline.writes)


async def test_kill_before_the_2nd_delete_of_an_eviction_evicts_no_second_gang(
    scheduling_plane: ControlPlane,
) -> None:
    # kill-before on the victim's second delete (kill-before:45 in the run that found it; also
    # kill-after:36, stale:41, stale:59): low1's master is gone, its worker marked
    # DisruptionTarget and still bound. The restarted scheduler took low1 for a gang torn
    # mid-bind, made it whole again and preempted low2 too: both low gangs were evicted for
    # one. It now finishes the eviction the marks record (RollBack.evicting).
    report, _ = await explore(
        scheduling_plane,
        "volcano",
        {"a": 2, "b": 2},
        PREEMPTION,
        priorities={"low": 10, "high": 1000},
        aim=("kill-before", "delete pods <namespace>/low1-worker-0"),
    )
    report.raise_on_failure()


# -- the invariants fire: histories of a broken scheduler --------------------------------------


def _event(type_: str, name: str, uid: str, node: str | None = None, **status: Any) -> Any:
    obj = {
        "kind": "Pod",
        "metadata": {"name": name, "uid": uid, "labels": {JOB: name.split("-")[0]}},
        "spec": {"nodeName": node} if node else {},
        "status": status,
    }
    return type_, obj


def _broken(*events: Any, end: Sequence[dict[str, Any]] = ()) -> History:
    history = History("ns", end_state=list(end))
    for type_, obj in events:
        history.events.append(HistoryEvent(len(history.events) + 1, type_, "Pod", obj))
    return history


def test_the_invariants_fire_on_what_a_non_atomic_binder_leaves() -> None:
    # A binder that binds pod by pod and gives up midway (no rollback), then binds one again.
    bound_alone = _event("MODIFIED", "a-master-0", "1", "n0")
    pending = _event("ADDED", "a-worker-0", "2")
    history = _broken(
        bound_alone,
        pending,
        _event("MODIFIED", "a-master-0", "1", "n1"),
        end=[bound_alone[1], pending[1]],
    )
    assert no_pod_bound_twice(history) == ["pod a-master-0 was bound to n0, then to n1"]
    assert no_partial_gang_left(history) == ["gang a is left partly bound: ['a-master-0'] of 2"]
    # A preemption that deletes one pod of its victim and keeps the other, or marks a pod and
    # never evicts it.
    history = _broken(
        _event("ADDED", "v-master-0", "3", "n2"),
        _event("ADDED", "v-worker-0", "4", "n3"),
        _event("DELETED", "v-master-0", "3", "n2"),
        _event("MODIFIED", "v-worker-0", "4", "n3", conditions=[{"type": "DisruptionTarget"}]),
    )
    assert evictions_take_whole_gangs(history) == [
        "gang v (v-master-0) lost a bound pod, but 1 other bound pod(s) of it stayed",
        "pod v-worker-0 was marked DisruptionTarget and never evicted",
    ]
