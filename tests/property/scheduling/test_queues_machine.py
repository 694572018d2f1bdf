"""A hypothesis state machine over ``GangScheduler`` with queues, on the fake cluster: gang
arrivals in two teams' queues (and in none), finishes, deletes, quota edits, and a queue
deleted and made again. After every step, once the scheduler is idle and the pods it evicted
are gone:

- no gang is partly bound;
- no queue uses more than its nominal quota plus what it may borrow, and the cohort lends no
  more than it has: each checked against a formula written here from the quotas, not by the
  scheduler's own arithmetic; a queue (or the cohort) may be over only when the step bound
  nothing more there (a quota edited down evicts nothing, and admits nothing until it fits);
- a gang evicted in a step was a borrower's (its queue over its nominal quota before the
  step), or one of lower priority of the evictor's own queue: no gang running within its
  queue's nominal quota is evicted by another queue;

with the cohort preempting for fair share or not (drawn), never a pair of queues preempting in
turn; and at the end, finishing whatever is bound until nothing more binds, every gang was bound or
waits with a true reason: its queue does not exist, or it wants more than its queue could
ever have.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

import factories
from crdkit.client import NotFound
from crdkit.resources import Event, Node, Pod
from crdkit.resources.queues import Queue
from crdkit.scheduling import GangScheduler
from crdkit.scheduling.groups import GROUP_APIS
from crdkit.scheduling.groups.coscheduling import COSCHEDULING_POD_GROUP_LABEL, CoschedulingPodGroup
from crdkit.scheduling.queues.gate import QUEUE_LABEL
from crdkit.testing import FakeCluster, FakeKind, running_manager
from crdkit.testing.sim.nodes import simulated_node

NAMESPACE = "ml"
NODES = ("n1", "n2", "n3", "n4")
GPUS = 8
COHORT_NOMINAL = 8
TEAMS = ("team-a", "team-b")


@dataclass(frozen=True)
class Quota:
    nominal: int
    borrowing: int | None
    lending: int | None


QUOTAS = st.builds(
    Quota,
    nominal=st.sampled_from([0, 8, 16]),
    borrowing=st.sampled_from([None, 0, 8]),
    lending=st.sampled_from([None, 0, 8]),
).map(
    lambda q: (
        q
        if q.lending is None or q.lending <= q.nominal
        else Quota(q.nominal, q.borrowing, q.nominal)
    )
)


@dataclass(frozen=True)
class Arrive:
    team: str | None
    pods: int
    priority: int


ARRIVALS = st.builds(
    Arrive,
    team=st.sampled_from([*TEAMS, None]),
    pods=st.integers(1, 3),
    priority=st.sampled_from([0, 100]),
)


@dataclass
class World:
    client: Any
    scheduler: GangScheduler
    stack: AsyncExitStack
    quotas: dict[str, Quota | None] = field(default_factory=dict)
    """Each team's quota; None: its queue is deleted."""
    gangs: dict[str, Arrive] = field(default_factory=dict)
    ever_bound: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    """Gangs this test finished or deleted (not evicted by the scheduler)."""
    evicted: set[str] = field(default_factory=set)


def queue_object(name: str, parent: str | None, quota: Quota) -> Queue:
    resource: dict[str, Any] = {"name": "nvidia.com/gpu", "nominal": quota.nominal}
    if quota.borrowing is not None:
        resource["borrowingLimit"] = quota.borrowing
    if quota.lending is not None:
        resource["lendingLimit"] = quota.lending
    spec: dict[str, Any] = {"flavors": [{"name": "gpu", "resources": [resource]}]}
    if parent:
        spec["parent"] = parent
    return Queue.model_validate({"metadata": {"name": name}, "spec": spec})


# -- the oracle: the quota rules written out for one cohort of two teams ----------------------


def lendable(quota: Quota) -> int:
    return quota.nominal if quota.lending is None else quota.lending


def pool(world: World) -> int:
    """What the cohort holds to lend: its own quota and what each team may lend."""
    return COHORT_NOMINAL + sum(lendable(q) for q in world.quotas.values() if q is not None)


def within_limits(world: World, used: dict[str, int]) -> dict[str, str]:
    """Per queue (and ``org``) over its limits, why."""
    over: dict[str, str] = {}
    in_pool = 0
    for team, quota in world.quotas.items():
        if quota is None:
            continue
        mine = used.get(team, 0)
        if quota.borrowing is not None and mine > quota.nominal + quota.borrowing:
            over[team] = f"uses {mine} > nominal {quota.nominal} + borrowing {quota.borrowing}"
        in_pool += max(0, mine - (quota.nominal - lendable(quota)))
    if in_pool > pool(world):
        over["org"] = f"the cohort lends {in_pool} of {pool(world)}"
    return over


def most_ever(world: World, team: str) -> int:
    """The most GPUs the team's queue could hold with the cluster otherwise empty."""
    quota = world.quotas[team]
    assert quota is not None
    kept = quota.nominal - lendable(quota)
    most = kept + pool(world)
    if quota.borrowing is not None:
        most = min(most, quota.nominal + quota.borrowing)
    return min(most, len(NODES) * GPUS)


# -- driving it ------------------------------------------------------------------------------


async def pods_by_gang(world: World) -> dict[str, list[Pod]]:
    found: dict[str, list[Pod]] = {}
    for pod in (await world.client.list(Pod, namespace=NAMESPACE)).items:
        found.setdefault(pod.metadata.labels[COSCHEDULING_POD_GROUP_LABEL], []).append(pod)
    return found


def used_by(world: World, pods: dict[str, list[Pod]]) -> dict[str, int]:
    used: dict[str, int] = {}
    for name, members in pods.items():
        team = world.gangs[name].team
        if team is not None:
            used[team] = used.get(team, 0) + GPUS * sum(1 for p in members if p.spec.node_name)
    return used


async def settle(world: World) -> None:
    """Until the scheduler is idle and the pods stay the same for a few looks; pods it
    evicted end at once, as their kubelet would end them."""
    last: Any = None
    quiet = 0
    first_pass = world.scheduler.passes
    while quiet < 3:
        assert world.scheduler.passes - first_pass < 500, "the scheduler never went quiet"
        await asyncio.sleep(0.02)
        pods = await pods_by_gang(world)
        for name, members in pods.items():
            going = [p for p in members if p.metadata.deletion_timestamp is not None]
            if going and name not in world.removed:
                world.evicted.add(name)
            for pod in going:
                await delete_pod(world, pod)
        now = (
            world.scheduler.passes,
            sorted((p.metadata.name, p.spec.node_name) for g in pods.values() for p in g),
        )
        quiet = quiet + 1 if world.scheduler.idle and now == last else 0
        last = now


async def delete_pod(world: World, pod: Pod) -> None:
    with suppress(NotFound):
        await world.client.delete(
            Pod, pod.metadata.name or "", namespace=NAMESPACE, grace_period_seconds=0
        )


async def arrive(world: World, step: Arrive) -> None:
    name = f"g{len(world.gangs)}"
    world.gangs[name] = step
    await world.client.create(factories.coscheduling_podgroup(name, step.pods, namespace=NAMESPACE))
    for index in range(step.pods):
        await world.client.create(
            factories.pod(
                f"{name}-{index}",
                namespace=NAMESPACE,
                gpus=GPUS,
                scheduler="gangs",
                priority=step.priority,
                labels={QUEUE_LABEL: step.team} if step.team else None,
                pod_group=("coscheduling", name),
            )
        )


async def remove(world: World, name: str) -> None:
    world.removed.add(name)
    for pod in (await pods_by_gang(world)).get(name, []):
        await delete_pod(world, pod)
    await world.client.delete(CoschedulingPodGroup, name, namespace=NAMESPACE)


async def set_quota(world: World, team: str, quota: Quota | None) -> None:
    if quota is None:
        await world.client.delete(Queue, team)
    elif world.quotas.get(team) is None:
        await world.client.create(queue_object(team, "org", quota))
    else:
        current = await world.client.get(Queue, team)
        fresh = queue_object(team, "org", quota)
        current.spec = fresh.spec
        await world.client.replace(current)
    world.quotas[team] = quota


async def set_fair_share(world: World, on: bool) -> None:
    org = await world.client.get(Queue, "org")
    org.spec.preemption.fair_share = on
    await world.client.replace(org)


async def check(world: World, used_before: dict[str, int], evicted_before: set[str]) -> None:
    pods = await pods_by_gang(world)
    for name, members in pods.items():
        bound = [p for p in members if p.spec.node_name]
        assert len(bound) in (0, len(members)), f"{name} partly bound"
        if bound:
            world.ever_bound.add(name)
    used = used_by(world, pods)
    # Over its limits only if the step bound nothing more there: a quota edited down leaves
    # what runs, but nothing more is admitted until it fits again.
    for where, why in within_limits(world, used).items():
        if where == "org":
            grew = sum(used.values()) > sum(used_before.values())
        else:
            grew = used.get(where, 0) > used_before.get(where, 0)
        assert not grew, f"{where} {why}, and the step bound more"
    for name in world.evicted - evicted_before:
        victim = world.gangs[name]
        team = victim.team
        quota = world.quotas.get(team) if team else None
        borrowing = quota is not None and used_before.get(team or "", 0) > quota.nominal
        waiting = set(world.gangs) - world.ever_bound - world.removed - world.evicted
        outranked = any(
            world.gangs[g].team == team and world.gangs[g].priority > victim.priority
            for g in waiting | {n for n in pods if n not in world.evicted}
        )
        assert borrowing or outranked, f"{name} of {team} evicted within its nominal quota"


async def step(world: World, action: Any) -> None:
    used_before = used_by(world, await pods_by_gang(world))
    evicted_before = set(world.evicted)
    await action(world)
    await settle(world)
    await check(world, used_before, evicted_before)


async def start() -> World:
    status = GROUP_APIS["coscheduling"].status_subresource
    cluster = FakeCluster(
        kinds=[
            FakeKind.of_crd(CoschedulingPodGroup, status_subresource=status),
            FakeKind.of_crd(Queue, status_subresource=True),
        ]
    )
    stack = AsyncExitStack()
    client = await stack.enter_async_context(cluster.client())
    # Every new reason is written at once: the end checks the reason a gang waits with now.
    scheduler = GangScheduler(
        "gangs", [], pod_groups=("coscheduling",), queues=True, report_backoff=(0.0, 0.0)
    )
    await stack.enter_async_context(running_manager(client, scheduler, stop_timeout=30))
    for node_name in NODES:
        node = simulated_node(node_name)
        await client.create(node)
        body = node.model_dump(mode="json", by_alias=True)["status"]
        await client.patch(Node, node_name, {"status": body}, subresource="status")
    world = World(client, scheduler, stack)
    await client.create(queue_object("org", None, Quota(COHORT_NOMINAL, None, None)))
    for team in TEAMS:
        await set_quota(world, team, Quota(8, None, None))
    return world


async def reason_of(world: World, name: str) -> str:
    """Why the gang waits: the latest FailedScheduling note on its PodGroup."""
    events = [
        e
        for e in (await world.client.list(Event, namespace=NAMESPACE)).items
        if e.reason == "FailedScheduling"
        and e.regarding
        and e.regarding.kind == "PodGroup"
        and e.regarding.name == name
    ]

    def last_said(event: Event) -> Any:
        series = event.series
        return series.last_observed_time if series is not None else event.event_time

    return max(events, key=last_said).note or "" if events else ""


async def drain(world: World) -> None:
    """Finish what runs until nothing more binds; what never bound must have a true reason."""
    for _ in range(len(world.gangs) + 1):
        running = sorted(world.ever_bound - world.removed - world.evicted)
        if not running:
            break
        for name in running:
            await remove(world, name)
        await settle(world)
        await check(world, used_by(world, await pods_by_gang(world)), set(world.evicted))
    pods = await pods_by_gang(world)
    for name, step_ in world.gangs.items():
        if name in world.removed or name in world.ever_bound or name not in pods:
            continue
        team = step_.team
        if team is None:
            raise AssertionError(f"{name}, in no queue, never bound on an empty cluster")
        reason = await reason_of(world, name)
        if world.quotas.get(team) is None:
            assert f"queue {team} does not exist" in reason, (name, reason)
        else:
            assert step_.pods * GPUS > most_ever(world, team), (name, reason, world.quotas)
            assert f"queue {team}:" in reason, (name, reason)


class QueuesMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.world = self.loop.run_until_complete(start())

    def _running(self) -> bool:
        return bool(self.world.ever_bound - self.world.removed - self.world.evicted)

    def _waiting(self) -> bool:
        return bool(set(self.world.gangs) - self.world.ever_bound - self.world.removed)

    @rule(action=ARRIVALS)
    def arrive(self, action: Arrive) -> None:
        self.loop.run_until_complete(step(self.world, lambda w: arrive(w, action)))

    @precondition(_running)
    @rule(pick=st.integers(0, 7))
    def finish(self, pick: int) -> None:
        running = sorted(self.world.ever_bound - self.world.removed - self.world.evicted)
        name = running[pick % len(running)]
        self.loop.run_until_complete(step(self.world, lambda w: remove(w, name)))

    @precondition(_waiting)
    @rule(pick=st.integers(0, 7))
    def delete(self, pick: int) -> None:
        waiting = sorted(set(self.world.gangs) - self.world.ever_bound - self.world.removed)
        name = waiting[pick % len(waiting)]
        self.loop.run_until_complete(step(self.world, lambda w: remove(w, name)))

    @rule(on=st.booleans())
    def fair_share(self, on: bool) -> None:
        """The cohort preempts for fair share, or stops (no two queues may then preempt in
        turn: `settle` fails a scheduler that never goes quiet)."""
        self.loop.run_until_complete(step(self.world, lambda w: set_fair_share(w, on)))

    @rule(team=st.sampled_from(TEAMS), quota=st.one_of(st.none(), QUOTAS))
    def edit_quota(self, team: str, quota: Quota | None) -> None:
        if quota is None and self.world.quotas.get(team) is None:
            quota = Quota(8, None, None)  # deleted already: made again
        self.loop.run_until_complete(step(self.world, lambda w: set_quota(w, team, quota)))

    def teardown(self) -> None:
        try:
            self.loop.run_until_complete(drain(self.world))
        finally:
            self.loop.run_until_complete(self.world.stack.aclose())
            self.loop.close()


QueuesMachine.TestCase.settings = settings(
    max_examples=15,
    stateful_step_count=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
)
test_queues_never_overspend_split_or_evict_within_quota = QueuesMachine.TestCase
