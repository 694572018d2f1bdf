"""A hypothesis state machine over ``GangScheduler``'s queue on the fake cluster: gang
arrivals (sizes, priorities, a required leaf or not, declared run times or not), finishes and
deletes. After every step, once the scheduler is idle:

- no gang is partly bound;
- no node holds more GPUs than it has;
- no node held by a reservation throughout the step went to a gang that may not use it (the
  holder, a higher priority, or a gang that declares its run time while the reservation knows
  when it is sure to fit);

and at the end, finishing whatever is bound until nothing waits binds every gang (each fits the
empty cluster), so none starves on a finite stream.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

import factories
from crdkit.resources import Node, Pod
from crdkit.scheduling import GangScheduler
from crdkit.scheduling.gangs import KUEUE_REQUIRED
from crdkit.scheduling.groups import GROUP_APIS
from crdkit.scheduling.groups.coscheduling import COSCHEDULING_POD_GROUP_LABEL, CoschedulingPodGroup
from crdkit.testing import FakeCluster, FakeKind, running_manager
from crdkit.testing.sim.nodes import simulated_node

LEAF = "example.com/leaf"
NAMESPACE = "ml"
NODES = {f"{leaf}{i}": leaf for leaf in ("a", "b") for i in (1, 2)}  # two leaves of two
GPUS = 8


@dataclass(frozen=True)
class Arrive:
    pods: int
    gpus: int
    priority: int
    whole_leaf: bool
    declares: bool


@dataclass(frozen=True)
class Finish:
    pick: int


@dataclass(frozen=True)
class Delete:
    pick: int


def _fits_empty(step: Arrive) -> bool:
    if step.whole_leaf:
        return step.pods * step.gpus <= 2 * GPUS  # one leaf: two nodes of 8
    return step.pods * step.gpus <= len(NODES) * GPUS


ARRIVALS = st.builds(
    Arrive,
    pods=st.integers(1, 3),
    gpus=st.sampled_from([4, 8]),
    priority=st.sampled_from([0, 100]),
    whole_leaf=st.booleans(),
    declares=st.booleans(),
).filter(_fits_empty)


@dataclass
class World:
    client: Any
    scheduler: GangScheduler
    stack: AsyncExitStack  # the client's session and the scheduler's Manager, closed by stop()
    gangs: dict[str, Arrive] = field(default_factory=dict)
    ever_bound: set[str] = field(default_factory=set)
    deleted: set[str] = field(default_factory=set)


async def pods_by_gang(world: World) -> dict[str, list[Pod]]:
    found: dict[str, list[Pod]] = {}
    for pod in (await world.client.list(Pod, namespace=NAMESPACE)).items:
        found.setdefault(pod.metadata.labels[COSCHEDULING_POD_GROUP_LABEL], []).append(pod)
    return found


async def bound_pods(world: World) -> set[str]:
    return {
        p.metadata.name or ""
        for members in (await pods_by_gang(world)).values()
        for p in members
        if p.spec.node_name
    }


MAX_PASSES_TO_SETTLE = 500
"""Passes one step may take to go quiet: a few suffice; a scheduler still passing after these
wakes itself (a livelock), which fails the step at once instead of hanging it."""


async def settle(world: World) -> None:
    """Until the scheduler is idle and what it bound stays the same for a few looks."""
    last: Any = None
    quiet = 0
    first_pass = world.scheduler.passes
    while quiet < 3:
        passes = world.scheduler.passes - first_pass
        assert passes < MAX_PASSES_TO_SETTLE, f"the scheduler never went quiet: {passes} passes"
        await asyncio.sleep(0.02)
        pods = await pods_by_gang(world)
        now = (
            world.scheduler.passes,
            sorted((p.metadata.name, p.spec.node_name) for g in pods.values() for p in g),
        )
        if world.scheduler.idle and now == last:
            quiet += 1
        else:
            quiet = 0
        last = now


async def arrive(world: World, step: Arrive) -> None:
    name = f"g{len(world.gangs)}"
    world.gangs[name] = step
    await world.client.create(factories.coscheduling_podgroup(name, step.pods, namespace=NAMESPACE))
    for index in range(step.pods):
        member = factories.pod(
            f"{name}-{index}",
            namespace=NAMESPACE,
            gpus=step.gpus,
            scheduler="gangs",
            priority=step.priority,
            pod_group=("coscheduling", name),
            annotations={KUEUE_REQUIRED: LEAF} if step.whole_leaf else None,
            **({"activeDeadlineSeconds": 60} if step.declares else {}),
        )
        await world.client.create(member)


async def remove(world: World, name: str) -> None:
    world.deleted.add(name)
    for pod in (await pods_by_gang(world)).get(name, []):
        await world.client.delete(
            Pod, pod.metadata.name or "", namespace=NAMESPACE, grace_period_seconds=0
        )
    await world.client.delete(CoschedulingPodGroup, name, namespace=NAMESPACE)


async def check(
    world: World, held_before: dict[str, tuple[str, int, bool]], bound_before: set[str]
) -> None:
    pods = await pods_by_gang(world)
    used: dict[str, int] = {}
    for name, members in pods.items():
        bound = [p for p in members if p.spec.node_name]
        assert len(bound) in (0, len(members)), f"{name} partly bound"
        if bound:
            world.ever_bound.add(name)
        for pod in bound:
            node = pod.spec.node_name or ""
            used[node] = used.get(node, 0) + world.gangs[name].gpus
    assert all(amount <= GPUS for amount in used.values()), used
    # Holds that lasted the whole step (same reservation id before and after).
    held_after = {
        node: (r.id, r.priority, r.ready_by is not None, r.holder)
        for r in world.scheduler.reservations.values()
        for node in r.nodes
    }
    for name, members in pods.items():
        step = world.gangs[name]
        for pod in members:
            node = pod.spec.node_name
            if node is None or pod.metadata.name in bound_before:
                continue  # only binds made during the step
            if node not in held_before or node not in held_after:
                continue
            rid, priority, knows_when = held_before[node]
            if held_after[node][0] != rid:
                continue
            holder = held_after[node][3]
            if holder == f"coscheduling/{NAMESPACE}/{name}":
                continue
            assert step.priority > priority or (step.declares and knows_when), (
                f"{name} was placed on {node}, held by {holder}"
            )


async def start() -> World:
    status = GROUP_APIS["coscheduling"].status_subresource
    cluster = FakeCluster(kinds=[FakeKind.of_crd(CoschedulingPodGroup, status_subresource=status)])
    stack = AsyncExitStack()
    client = await stack.enter_async_context(cluster.client())
    scheduler = GangScheduler("gangs", [LEAF], pod_groups=("coscheduling",))
    await stack.enter_async_context(running_manager(client, scheduler, stop_timeout=30))
    for node_name, leaf in NODES.items():
        node = simulated_node(node_name, labels={LEAF: leaf})
        await client.create(node)
        status = node.model_dump(mode="json", by_alias=True)["status"]
        await client.patch(Node, node_name, {"status": status}, subresource="status")
    return World(client, scheduler, stack)


async def step(world: World, action: Arrive | Finish | Delete) -> None:
    """One step of the stream, then the checks once the scheduler is idle."""
    held_before = {
        node: (r.id, r.priority, r.ready_by is not None)
        for r in world.scheduler.reservations.values()
        for node in r.nodes
    }
    bound_before = await bound_pods(world)
    bound = sorted(world.ever_bound - world.deleted)
    waiting = sorted(set(world.gangs) - world.ever_bound - world.deleted)
    if isinstance(action, Arrive):
        await arrive(world, action)
    elif isinstance(action, Finish) and bound:
        await remove(world, bound[action.pick % len(bound)])
    elif isinstance(action, Delete) and waiting:
        await remove(world, waiting[action.pick % len(waiting)])
    await settle(world)
    await check(world, held_before, bound_before)


async def drain(world: World) -> None:
    """A finite stream: finish what runs until nothing waits; every gang gets its turn."""
    for _ in range(len(world.gangs) + 1):
        waiting = set(world.gangs) - world.ever_bound - world.deleted
        if not waiting:
            break
        for name in sorted(world.ever_bound - world.deleted):
            await remove(world, name)
        await settle(world)
        await check(world, {}, set())
    assert set(world.gangs) - world.deleted <= world.ever_bound, (
        f"never bound: {sorted(set(world.gangs) - world.deleted - world.ever_bound)}"
    )


async def stop(world: World) -> None:
    await world.stack.aclose()


class QueueMachine(RuleBasedStateMachine):
    """Arrivals, finishes and deletes in any order, checked after every step; the teardown
    finishes what runs until every gang has been bound."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.world = self.loop.run_until_complete(start())

    def _running(self) -> bool:
        return bool(self.world.ever_bound - self.world.deleted)

    def _waiting(self) -> bool:
        return bool(set(self.world.gangs) - self.world.ever_bound - self.world.deleted)

    @rule(action=ARRIVALS)
    def arrive(self, action: Arrive) -> None:
        self.loop.run_until_complete(step(self.world, action))

    # Rules are drawn evenly: without these, a finish or delete with nothing to act on would
    # spend a step doing nothing.
    @precondition(_running)
    @rule(pick=st.integers(0, 7))
    def finish(self, pick: int) -> None:
        self.loop.run_until_complete(step(self.world, Finish(pick)))

    @precondition(_waiting)
    @rule(pick=st.integers(0, 7))
    def delete(self, pick: int) -> None:
        self.loop.run_until_complete(step(self.world, Delete(pick)))

    def teardown(self) -> None:
        try:
            self.loop.run_until_complete(drain(self.world))
        finally:
            self.loop.run_until_complete(stop(self.world))
            self.loop.close()


QueueMachine.TestCase.settings = settings(
    max_examples=20,
    stateful_step_count=9,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    # No shrinking: each attempt replays a live scheduler, so a failure is reported as found
    # (with its steps) within the test's timeout rather than shrunk for many minutes.
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
)
test_the_queue_machine_never_splits_overcommits_or_starves = QueueMachine.TestCase


def test_a_small_gang_does_not_take_a_node_held_for_a_whole_leaf() -> None:
    """A whole-leaf gang waits behind two others and holds the emptier leaf; a small gang of
    the same priority that declares nothing arrives and must not take the held node."""

    async def scenario() -> None:
        world = await start()
        try:
            for action in [
                Arrive(2, 8, 0, whole_leaf=False, declares=False),
                Arrive(1, 8, 0, whole_leaf=False, declares=False),
                Arrive(2, 8, 0, whole_leaf=True, declares=False),
                Arrive(1, 8, 0, whole_leaf=False, declares=False),
                Finish(0),
            ]:
                await step(world, action)
            await drain(world)
        finally:
            await stop(world)

    asyncio.run(scenario())


def test_a_preemptor_is_not_bound_beside_its_victims_terminating_pods() -> None:
    """The steps the machine found with the roll-back of an eviction cut short: g4 preempts
    the low gang g1, whose pods stay terminating (no kubelet here). A pass between the end of
    the eviction's deletes and the pod cache showing the last of them took g1 for an eviction
    a stopped scheduler cut short, finished it again, and counted its terminating pods free:
    g4 was bound beside one of them. It failed about one run in four, so it runs four times;
    the unit tests of `Dispatcher` (test_dispatcher.py) pin both halves of it
    deterministically."""

    async def scenario() -> None:
        world = await start()
        try:
            for action in [
                Arrive(1, 4, 100, whole_leaf=True, declares=True),
                Arrive(2, 8, 0, whole_leaf=False, declares=False),
                Arrive(2, 4, 100, whole_leaf=True, declares=False),
                Arrive(1, 4, 100, whole_leaf=True, declares=False),
                Arrive(1, 4, 100, whole_leaf=False, declares=True),
            ]:
                await step(world, action)
            await drain(world)
        finally:
            await stop(world)

    for _ in range(4):
        asyncio.run(scenario())
