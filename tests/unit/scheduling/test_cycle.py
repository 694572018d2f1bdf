"""`Cycle.run_pass` as data: caches in memory go in, decisions come out, with no cluster and no
client (as `crdkit.runtime.sharding.plan` is tested). Each test builds the view a pass reads
(nodes and pods in a `ClusterMirror`, pods and PodGroups in plain stores) and reads the list of
decisions the pass returns."""

from __future__ import annotations

from typing import Any, TypeVar

import pytest

import factories
from crdkit.resources import Pod, PodCondition, PodDisruptionBudget
from crdkit.runtime.store import Store
from crdkit.scheduling import ClusterMirror, GroupRef, SchedulerOptions
from crdkit.scheduling.cycle import Cycle
from crdkit.scheduling.decisions import (
    Bind,
    Decision,
    Evict,
    Later,
    Reserve,
    RollBack,
    Wait,
    WriteStatus,
)
from crdkit.scheduling.gangs import KUEUE_REQUIRED, KUEUE_SLICE_REQUIRED, KUEUE_SLICE_SIZE
from crdkit.scheduling.groups import BARE_POD, pod_group_of
from crdkit.scheduling.groups.coscheduling import CoschedulingPodGroup
from crdkit.scheduling.outlook import Outlook
from crdkit.scheduling.pending import GROUP_INDEX, GroupReader, finished
from crdkit.scheduling.pod_reads import PodReads
from crdkit.scheduling.preemption import Preemptor
from crdkit.scheduling.queue import GangQueue
from crdkit.scheduling.rank_rules import RankRuleIndex
from crdkit.scheduling.reporting import Reporter
from crdkit.scheduling.reservations import Reservations

LEAF = "example.com/leaf"
WALL = 1_800_000_000.0
D = TypeVar("D", bound=Decision)


def gang_of(pod: Pod) -> list[str]:
    namespace = pod.metadata.namespace or "default"
    found = pod_group_of(pod)
    if found is None:
        return [str(GroupRef(BARE_POD, namespace, pod.metadata.name or ""))]
    return [str(GroupRef(found[0], namespace, found[1]))]


class View:
    """What a pass reads, in memory: two leaves of ``nodes`` 8-GPU nodes each."""

    def __init__(self, nodes: int = 2, **options: Any) -> None:
        self.now = 0.0
        self.mirror = ClusterMirror([LEAF], clock=lambda: self.now)
        for leaf in ("l0", "l1"):
            for index in range(nodes):
                name = f"{leaf}-n{index}"
                self.mirror.set_node(factories.node(name, rack=None, labels={LEAF: leaf}))
        self.pods: Store[Pod] = Store({GROUP_INDEX: gang_of})
        self.podgroups: Store[CoschedulingPodGroup] = Store()
        budgets: Store[PodDisruptionBudget] = Store()
        reads = PodReads(self.pods)
        self.queue = GangQueue(lambda: self.now, (1.0, 60.0))
        self.reservations = Reservations(self.mirror, self.queue, 1, 16)
        reporter = Reporter(self.mirror, lambda: self.now, (1.0, 30.0), 10.0)
        reader = GroupReader(reads, self.mirror, lambda api: self.podgroups)
        preemptor = Preemptor(self.mirror, self.reservations, reader, self.pods, budgets)
        rank_rules = RankRuleIndex(self.pods, reads.get, lambda p: p.spec.node_name, finished)
        self.busy: set[GroupRef] = set()
        self.options = SchedulerOptions(**options)
        self.cycle = Cycle(
            [LEAF],
            self.options,
            self.mirror,
            reader,
            rank_rules,
            (self.queue, self.reservations, preemptor, reporter),
            busy=self.busy.__contains__,
            clock=lambda: self.now,
            wall_clock=lambda: WALL,
            pod_end=lambda key: self.ends.get(key),
            outlook=Outlook(self.mirror, self.options.policy, acting=self.options.start_plan),
        )
        self.ends: dict[str, float] = {}
        """Declared ends of running pods, by key."""
        self._version = 0

    def gang(
        self,
        name: str,
        pods: int,
        *,
        min_member: int | None = None,
        node: str | None = None,
        priority: int = 0,
        leaf: bool = True,
        created: str = "2026-01-01T00:00:00Z",
        bound: int | None = None,
    ) -> GroupRef:
        """A coscheduling gang of ``pods`` 8-GPU pods (bound to ``node``'s leaf mates when
        given), requiring one leaf unless ``leaf`` is False."""
        group = factories.coscheduling_podgroup(name, min_member or pods)
        stamped = group.model_dump(mode="json", by_alias=True, exclude_none=True)
        stamped["metadata"]["creationTimestamp"] = created
        self.podgroups.upsert(CoschedulingPodGroup.model_validate(stamped))
        for index in range(pods):
            self._version += 1
            pod = factories.pod(
                f"{name}-{index}",
                gpus=8,
                pod_group=("coscheduling", name),
                priority=priority,
                uid=f"{name}-{index}-uid",
                resource_version=str(self._version),
                created=created,
                node=None if node is None else f"{node}-n{index}",
                phase="Running" if node is not None else None,
                annotations={KUEUE_REQUIRED: LEAF} if leaf else None,
                **({} if bound is None else {"activeDeadlineSeconds": bound}),
            )
            if bound is not None and node is not None:
                self.ends[f"ml/{name}-{index}"] = WALL + bound
            self.pods.upsert(pod)
            self.mirror.set_pod(pod)
        return GroupRef("coscheduling", "ml", name)

    async def run(self, *refs: GroupRef) -> list[Decision]:
        return await self.cycle.run_pass(sorted(refs))


def only(decisions: list[Decision], kind: type[D]) -> list[D]:
    return [d for d in decisions if isinstance(d, kind)]


async def test_a_gang_that_fits_is_assumed_in_one_leaf_and_bound() -> None:
    view = View()
    ref = view.gang("a", 2)
    decisions = await view.run(ref)
    assert [type(d) for d in decisions] == [WriteStatus, Bind]
    (bind,) = only(decisions, Bind)
    nodes = {b.node for b in bind.reservation.bindings}
    assert len({node.split("-")[0] for node in nodes}) == 1  # one leaf
    assert all(view.mirror.is_assumed(b.key) for b in bind.reservation.bindings)
    assert bind.reservation.bindings[0].milli == {"nvidia.com/gpu": 8000}


async def test_a_gang_short_of_pods_waits_and_is_told_once() -> None:
    view = View()
    ref = view.gang("a", 2, min_member=3)
    decisions = await view.run(ref)
    assert [type(d) for d in decisions] == [WriteStatus, Wait]
    (wait,) = only(decisions, Wait)
    assert (wait.reason, wait.message) == ("WaitingForPods", "2 of the 3 pods of the gang exist")
    again = await view.run(ref)
    assert [type(d) for d in again] == [WriteStatus]  # nothing new to say
    assert view.queue.ordered() == []  # not in line for room: it is not ready


async def test_the_head_gang_that_does_not_fit_holds_the_leaf_it_fits_soonest() -> None:
    view = View()
    view.gang("small", 1, node="l0")  # one node of leaf l0 busy
    view.gang("other", 1, node="l1")  # and one of l1
    big = view.gang("big", 2, created="2026-01-01T00:00:01Z")
    decisions = await view.run(big)
    assert not only(decisions, Bind)
    (reserve,) = only(decisions, Reserve)
    assert reserve.ref == big
    assert reserve.reservation.level == LEAF
    (wait,) = only(decisions, Wait)
    assert wait.reason == "Unschedulable"
    assert "reserved example.com/leaf=" in wait.message
    assert wait.message.endswith("[in line: 1 of 1 at priority 0]")
    assert view.queue.ordered() == [(big, 0)]


async def test_a_higher_priority_gang_evicts_whole_lower_gangs_of_one_leaf() -> None:
    view = View()
    low_a = view.gang("low-a", 2, node="l0", priority=5)
    view.gang("low-b", 2, node="l1")
    high = view.gang("high", 2, priority=100)
    decisions = await view.run(high)
    (evict,) = only(decisions, Evict)
    assert evict.ref == high
    assert evict.priority == 100
    # The leaf whose victims lose least: the one of the lower-priority gang, taken whole.
    (victim,) = evict.victims
    assert victim.ref == "coscheduling/ml/low-b"
    assert {pod.key for pod in victim.pods} == {"ml/low-b-0", "ml/low-b-1"}
    assert evict.where == f"{LEAF}=l1"
    assert view.reservations.held[high].nodes == {"l1-n0", "l1-n1"}
    assert low_a not in {GroupRef.parse(v.ref) for v in evict.victims}


async def test_no_second_gang_is_evicted_while_a_stopped_schedulers_victim_is_going() -> None:
    # low-b's pods carry a preemption's DisruptionTarget that this process did not write (a
    # scheduler stopped mid-eviction): the room they free is coming, so high waits for it
    # instead of evicting low-a too. Once they are gone, preemption is judged again.
    view = View()
    view.gang("low-a", 2, node="l0", priority=5)
    view.gang("low-b", 2, node="l1")
    for index in range(2):
        pod = view.pods.get_by_name(f"low-b-{index}", "ml")
        assert pod is not None
        marked = pod.model_copy(deep=True)
        assert marked.status is not None
        marked.status.conditions = [
            PodCondition(type="DisruptionTarget", status="True", reason="PreemptionByScheduler")
        ]
        marked.metadata.resource_version = f"marked-{index}"
        view.pods.upsert(marked)
    high = view.gang("high", 2, priority=100)
    assert not only(await view.run(high), Evict)
    for index in range(2):
        view.pods.delete(f"ml/low-b-{index}")
        view.mirror.remove_pod(factories.pod(f"low-b-{index}", namespace="ml"))
    assert not only(await view.run(high), Evict)  # low-b's leaf is free: no victim needed


async def test_a_refused_gang_is_looked_at_again_after_its_backoff() -> None:
    view = View()
    ref = view.gang("a", 1)
    view.queue.back_off(ref)
    decisions = await view.run(ref)
    assert decisions == [Later(ref, 1.0)]
    view.now = 1.0
    assert [type(d) for d in await view.run(ref)] == [WriteStatus, Bind]


async def test_a_gang_being_bound_or_rolled_back_is_left_alone() -> None:
    view = View()
    ref = view.gang("a", 1)
    view.busy.add(ref)
    assert await view.run(ref) == []


async def test_a_gang_left_partly_bound_across_leaves_is_rolled_back() -> None:
    view = View()
    ref = view.gang("torn", 2, min_member=4)
    for index, node in ((0, "l0-n0"), (1, "l1-n0")):  # bound in two leaves, nothing running
        pod = factories.pod(
            f"torn-b{index}",
            gpus=8,
            pod_group=("coscheduling", "torn"),
            uid=f"torn-b{index}",
            resource_version=f"b{index}",
            node=node,
            annotations={KUEUE_REQUIRED: LEAF},
        )
        view.pods.upsert(pod)
        view.mirror.set_pod(pod)
    decisions = await view.run(ref)
    (roll_back,) = only(decisions, RollBack)
    assert sorted(p.metadata.name or "" for p in roll_back.group.bound) == ["torn-b0", "torn-b1"]


def _victim_pod(index: int, node: str, *, marked: bool) -> Pod:
    """A bound, running pod of the gang ``low``; ``marked``: a preemption's DisruptionTarget."""
    conditions = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    return factories.pod(
        f"low-{index}",
        gpus=8,
        pod_group=("coscheduling", "low"),
        uid=f"low-{index}",
        resource_version=f"v{index}",
        node=node,
        phase="Running",
        status={"conditions": conditions} if marked else None,
    )


async def test_a_victim_left_half_evicted_by_a_stopped_scheduler_is_evicted_whole() -> None:
    # A scheduler marked the gang's pods DisruptionTarget, deleted one, and stopped; its
    # controller made that pod again. The survivor is not adopted as a gang torn mid-bind:
    # the eviction is finished (found by the scheduler's crash tests).
    view = View()
    ref = view.gang("low", 1, min_member=2)
    survivor = _victim_pod(1, "l0-n1", marked=True)
    view.pods.upsert(survivor)
    view.mirror.set_pod(survivor)
    decisions = await view.run(ref)
    (roll_back,) = only(decisions, RollBack)
    assert roll_back.evicting
    assert [p.metadata.name for p in roll_back.group.bound] == ["low-1"]
    assert not only(decisions, Bind)


async def test_a_victim_this_scheduler_is_evicting_is_left_to_its_eviction() -> None:
    view = View()
    ref = view.gang("low", 1, min_member=2)
    survivor = _victim_pod(1, "l0-n1", marked=True)
    view.pods.upsert(survivor)
    view.mirror.set_pod(survivor)
    view.busy.add(ref)  # the dispatcher counts a gang it evicts as busy
    assert await view.run(ref) == []


async def test_an_unmarked_survivor_is_adopted_as_before() -> None:
    view = View()
    ref = view.gang("low", 1, min_member=2)
    survivor = _victim_pod(1, "l0-n1", marked=False)
    view.pods.upsert(survivor)
    view.mirror.set_pod(survivor)
    decisions = await view.run(ref)
    assert not only(decisions, RollBack)
    assert only(decisions, Bind)


async def test_a_gone_gang_is_forgotten() -> None:
    view = View()
    ref = view.gang("a", 1, min_member=2)
    await view.run(ref)
    view.pods.delete("ml/a-0")
    view.podgroups.delete("ml/a")
    assert await view.run(ref) == []


@pytest.mark.parametrize("size_credit", [0.0, 10.0])
async def test_the_batch_is_placed_in_the_queues_order(size_credit: float) -> None:
    # One leaf free: a pod that came first, then a two-pod gang 5 s later. With the size
    # credit the pair goes first (credited 10 s for its doubling), without it the single pod.
    view = View(size_credit=size_credit)
    view.gang("busy", 2, node="l1")
    single = view.gang("single", 1, leaf=False, created="2026-01-01T00:00:00Z")
    pair = view.gang("pair", 2, created="2026-01-01T00:00:05Z")
    decisions = await view.run(single, pair)
    bound = [b.group.ref for b in only(decisions, Bind)]
    assert bound == ([pair] if size_credit else [single])


async def test_a_slice_that_does_not_divide_its_task_waits_with_that_reason() -> None:
    # Compiled from the contract, this gang used to fail the whole pass.
    view = View()
    ref = view.gang("sliced", 2)
    for index in range(2):
        key = f"ml/sliced-{index}"
        pod = view.pods.get(key)
        assert pod is not None
        pod.metadata.annotations.update({KUEUE_SLICE_REQUIRED: LEAF, KUEUE_SLICE_SIZE: "3"})
        pod.metadata.resource_version = f"s{index}"
        view.pods.upsert(pod)
    decisions = await view.run(ref)
    (wait,) = only(decisions, Wait)
    assert wait.reason == "InvalidPod"
    assert "slice size 3 does not divide the task's 2 pods" in wait.message


async def a_holder_of_a_busy_leaf(view: View) -> GroupRef:
    """One node of each leaf busy, and a 2-pod gang that came at 00:05 holding a leaf."""
    view.gang("small", 1, node="l0")
    view.gang("other", 1, node="l1")
    later = view.gang("later", 2, created="2026-01-01T00:00:05Z")
    await view.run(later)
    assert list(view.reservations.held) == [later]
    return later


async def test_a_gang_back_in_line_ahead_of_the_holder_takes_its_reservation() -> None:
    # A preempted gang that its controller made again comes back into line ahead of the gang
    # that became head meanwhile: the reservation moves to it, as the head is owed room first.
    view = View()
    later = await a_holder_of_a_busy_leaf(view)
    earlier = view.gang("earlier", 2, created="2026-01-01T00:00:01Z")
    decisions = await view.run(earlier, later)
    assert [d.ref for d in only(decisions, Reserve)] == [earlier]
    assert list(view.reservations.held) == [earlier]
    assert view.queue.ordered() == [(earlier, 0), (later, 0)]


async def test_a_head_with_no_room_leaves_the_holders_reservation_alone() -> None:
    # The head of the line is owed the holder's room only if that room is of use to it: a
    # head that fits nowhere must not take the reservation away, or the holder takes it back
    # on its turn, every pass, and each hold and release wakes the line again (a livelock).
    view = View()
    later = await a_holder_of_a_busy_leaf(view)
    held = view.reservations.held[later]
    earlier = view.gang("earlier", 3, created="2026-01-01T00:00:01Z")  # no leaf has 3 nodes
    for _ in range(2):
        decisions = await view.run(earlier, later)
        assert not only(decisions, Reserve)
        assert view.reservations.held == {later: held}


async def test_room_freed_by_preemption_stays_with_its_preemptor() -> None:
    view = View()
    view.gang("low", 2, node="l1")
    late = view.gang("late", 2, priority=100, created="2026-01-01T00:00:05Z")
    view.gang("busy", 1, node="l0")
    await view.run(late)
    assert view.reservations.held[late].freed_by_preemption
    early = view.gang("early", 2, priority=100, created="2026-01-01T00:00:01Z")
    await view.run(early, late)
    assert late in view.reservations.held  # its victims are going: the room stays its own


@pytest.mark.parametrize("rule", [False, True])
async def test_a_topology_rule_by_size_keeps_big_gangs_in_one_leaf(rule: bool) -> None:
    # One free node in each leaf. A pair that asks for no topology spreads over both leaves;
    # with "gangs of 2 pods or more require one leaf" it waits for a leaf instead.
    by_size = ((2, {"mode": "required", "level": LEAF}),) if rule else ()
    view = View(topology_by_size=by_size)
    view.gang("busy-0", 1, node="l0")
    view.gang("busy-1", 1, node="l1")
    pair = view.gang("pair", 2, leaf=False)
    decisions = await view.run(pair)
    if rule:
        assert not only(decisions, Bind)
        (wait,) = only(decisions, Wait)
        assert "example.com/leaf" in wait.message
    else:
        (bind,) = only(decisions, Bind)
        assert {b.node for b in bind.reservation.bindings} == {"l0-n1", "l1-n1"}


async def test_with_declared_run_times_a_gang_is_promised_a_start_and_told_it() -> None:
    view = View(start_plan=True)
    view.gang("left", 2, node="l0", bound=30)  # l0 frees at +30
    view.gang("right", 2, node="l1", bound=50)  # l1 at +50
    big = view.gang("big", 2, bound=60, created="2026-01-01T00:00:01Z")
    decisions = await view.run(big)
    assert not only(decisions, Bind)
    assert not only(decisions, Reserve)  # the promise holds its room, not a reservation
    assert only(decisions, Later) == [Later(big, 30.0)]  # a pass is due at its start
    (wait,) = only(decisions, Wait)
    assert wait.reason == "Unschedulable"
    assert wait.message.startswith("planned to start by 2027-01-15T08:00:30Z")
    assert view.cycle.plan.promised[big] == WALL + 30
    # The gang behind that would run into the promised leaf waits; one that ends first starts.
    long = view.gang("long", 1, leaf=False, bound=40, created="2026-01-01T00:00:02Z")
    assert not only(await view.run(big, long), Bind)
    view.mirror.remove_pod("ml/left-0")  # ended early: l0-n0 is free now
    short = view.gang("short", 1, leaf=False, bound=20, created="2026-01-01T00:00:03Z")
    (bind,) = only(await view.run(big, long, short), Bind)
    assert bind.group.ref == short
    assert {b.node for b in bind.reservation.bindings} == {"l0-n0"}


async def test_by_default_declared_run_times_only_serve_reservations() -> None:
    view = View()
    view.gang("left", 2, node="l0", bound=30)
    view.gang("right", 2, node="l1", bound=50)
    big = view.gang("big", 2, bound=60, created="2026-01-01T00:00:01Z")
    decisions = await view.run(big)
    (reserve,) = only(decisions, Reserve)
    assert reserve.reservation.ready_by == WALL + 30
    # The plan is made beside the pass, as an estimate: told, and kept to be compared.
    assert view.cycle.plan.promised == {big: WALL + 30}
    (wait,) = only(decisions, Wait)
    assert "; expected to start by 2027-01-15T08:00:30Z [in line: 1 of 1" in wait.message


async def test_a_gang_that_never_fits_is_told_only_why() -> None:
    view = View()  # leaves of two 8-GPU nodes: three whole-node pods never fit one
    view.gang("left", 2, node="l0", bound=30)
    huge = view.gang("huge", 3)
    decisions = await view.run(huge)
    assert not only(decisions, Reserve)
    (wait,) = only(decisions, Wait)
    assert wait.message.startswith("never fits this cluster")
    # No place in line, no expected start, no held nodes: waiting does not help it.
    assert "[in line" not in wait.message
    assert "expected" not in wait.message
    assert "reserved" not in wait.message
