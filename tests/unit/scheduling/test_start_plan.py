"""`StartPlan` on a mirror in memory: who starts now, what the others are promised, and that a
gang behind starts now only where it delays no promise (conservative backfill)."""

from __future__ import annotations

import math

import factories
from crdkit import _placer
from crdkit.scheduling import ClusterMirror, GroupRef
from crdkit.scheduling.start_plan import OVERDUE_GRACE, PlanEntry, Planned, StartPlan

LEAF = "example.com/leaf"
NOW = 1_800_000_000.0


class World:
    """Two leaves of two 8-GPU nodes; pods whose declared ends the plan reads from ``ends``."""

    def __init__(self) -> None:
        self.mirror = ClusterMirror([LEAF], clock=lambda: 0.0)
        for leaf in ("l0", "l1"):
            for index in range(2):
                name = f"{leaf}-n{index}"
                self.mirror.set_node(factories.node(name, rack=None, labels={LEAF: leaf}))
        self.ends: dict[str, float | None] = {}
        self.plan = StartPlan(self.mirror, "best-fit")

    def running(self, name: str, node: str, end: float | None) -> None:
        """A running pod of 8 GPUs on ``node`` that declares it ends at ``end``."""
        pod = factories.pod(name, gpus=8, node=node, phase="Running", uid=name)
        self.mirror.set_pod(pod)
        self.ends[f"ml/{name}"] = end

    def busy(self, ends: dict[str, float | None]) -> None:
        """A running pod of 8 GPUs on each node named, called after its node ("on-l0-n0")."""
        for node, end in ends.items():
            self.running(f"on-{node}", node, end)

    def ended(self, name: str) -> None:
        self.mirror.remove_pod(f"ml/{name}")

    def gang(self, name: str, pods: int, *, leaf: bool = True, priority: int = 0) -> _placer.Gang:
        topology = {"mode": "required", "level": LEAF} if leaf else {"mode": "unconstrained"}
        return self.mirror.cluster.compile(
            {
                "name": name,
                "priority": priority,
                "topology": topology,
                "tasks": [{"name": "w", "replicas": pods, "requests": {"nvidia.com/gpu": "8"}}],
            }
        )

    def run(
        self, now: float, *line: tuple[str, _placer.Gang, float | None, int]
    ) -> dict[str, Planned]:
        entries = [
            (PlanEntry(ref(name), gang, bound), priority) for name, gang, bound, priority in line
        ]
        said, _ = self.plan.plan(entries, self.ends.get, now)
        return {key.name: planned for key, planned in said.items()}


def ref(name: str) -> GroupRef:
    return GroupRef("coscheduling", "ml", name)


def nodes(planned: Planned) -> set[str]:
    assert planned.placement is not None
    return {a.node for a in planned.placement.assignments}


def test_a_gang_that_fits_starts_now_where_the_placer_puts_it() -> None:
    world = World()
    said = world.run(NOW, ("a", world.gang("a", 2), 60.0, 0))
    assert said["a"].starts_now(NOW)
    assert len({node.split("-")[0] for node in nodes(said["a"])}) == 1
    assert world.plan.promised[ref("a")] == NOW


def test_a_gang_that_does_not_fit_is_promised_the_first_declared_end_that_makes_room() -> None:
    world = World()
    world.running("x", "l0-n0", NOW + 30)
    world.running("y", "l1-n0", NOW + 50)
    said = world.run(NOW, ("big", world.gang("big", 2), 60.0, 0))
    assert said["big"].start == NOW + 30
    assert nodes(said["big"]) == {"l0-n0", "l0-n1"}
    assert not said["big"].starts_now(NOW)
    assert said["big"].tried.status == "unschedulable"  # why it waits, tried now
    slot = world.plan.slots[ref("big")]
    assert (slot.start, slot.end) == (NOW + 30, NOW + 90)


def test_a_gang_behind_starts_now_only_where_it_ends_before_a_promise() -> None:
    world = World()
    world.running("x", "l0-n0", NOW + 30)
    world.running("y", "l1-n0", NOW + 50)
    big = ("big", world.gang("big", 2), 60.0, 0)
    short = ("short", world.gang("short", 1), 20.0, 0)  # done by +20: fits before big's +30
    long = ("long", world.gang("long", 1), 40.0, 0)  # would run into big's slot on l0
    late = ("late", world.gang("late", 1), 40.0, 0)
    said = world.run(NOW, big, short, long, late)
    assert said["big"].start == NOW + 30
    assert said["short"].starts_now(NOW)
    assert nodes(said["short"]) == {"l0-n1"}
    assert said["long"].starts_now(NOW)
    assert nodes(said["long"]) == {"l1-n1"}  # the leaf big is not promised
    # No room is free now but in l0, promised to big from +30: late waits for long's end.
    assert said["late"].start == NOW + 40
    assert nodes(said["late"]) == {"l1-n1"}


def test_an_unbounded_gang_behind_never_starts_in_room_promised_ahead() -> None:
    world = World()
    world.running("x", "l0-n0", NOW + 30)
    world.running("y", "l1-n0", NOW + 50)
    said = world.run(
        NOW,
        ("big", world.gang("big", 2), 60.0, 0),
        ("forever", world.gang("forever", 1), None, 0),
    )
    assert said["forever"].starts_now(NOW)
    assert nodes(said["forever"]) == {"l1-n1"}
    assert world.plan.slots[ref("forever")].end == math.inf


def test_promises_only_move_earlier_and_the_first_is_kept_to_count() -> None:
    world = World()
    world.busy({"l0-n0": NOW + 30, "l1-n0": NOW + 50, "l0-n1": NOW + 40, "l1-n1": NOW + 40})
    big = ("big", world.gang("big", 2), 60.0, 0)
    assert world.run(NOW, big)["big"].start == NOW + 40
    world.ended("on-l0-n1")  # ended early: l0 frees at +30
    assert world.run(NOW + 5, big)["big"].start == NOW + 30
    assert world.plan.promised[ref("big")] == NOW + 40
    world.ended("on-l0-n0")
    assert world.run(NOW + 10, big)["big"].starts_now(NOW + 10)
    world.plan.started(ref("big"), NOW + 10)
    assert (world.plan.kept, world.plan.late) == (1, 0)
    assert ref("big") not in world.plan.slots


def test_a_gang_started_after_the_first_pass_past_its_promise_counts_late() -> None:
    world = World()
    world.busy({node: NOW + 30 for node in ("l0-n0", "l0-n1", "l1-n0", "l1-n1")})
    one = ("one", world.gang("one", 1), 60.0, 0)
    assert world.run(NOW, one)["one"].start == NOW + 30
    # The pods ran past their declared ends: the pass at +30 finds no room.
    later = world.run(NOW + 30, one)["one"]
    assert later.start == NOW + 30 + OVERDUE_GRACE
    world.ended("on-l0-n0")
    world.run(NOW + 32, one)
    world.plan.started(ref("one"), NOW + 32)
    assert (world.plan.kept, world.plan.late) == (0, 1)


def test_a_higher_priority_gang_is_planned_before_promises_of_lower_ones() -> None:
    world = World()
    world.running("x", "l0-n0", NOW + 30)
    world.running("y", "l1-n0", NOW + 50)
    low = ("low", world.gang("low", 2), 60.0, 0)
    assert world.run(NOW, low)["low"].start == NOW + 30
    high = ("high", world.gang("high", 2, priority=10), 60.0, 10)
    said = world.run(NOW + 1, high, low)
    assert said["high"].start == NOW + 30  # the room low was promised
    assert said["low"].start == NOW + 50
    assert nodes(said["low"]) == {"l1-n0", "l1-n1"}


def test_room_held_by_a_pod_that_declares_no_end_is_never_planned() -> None:
    world = World()
    for node in ("l0-n0", "l1-n0"):
        world.running(f"on-{node}", node, None)
    said = world.run(NOW, ("big", world.gang("big", 2), 60.0, 0))
    assert said["big"].start is None
    assert said["big"].placement is None
    assert ref("big") not in world.plan.slots
    assert not world.plan.engaged([])


def test_without_bounds_or_promises_the_plan_is_not_engaged() -> None:
    world = World()
    entry = PlanEntry(ref("a"), world.gang("a", 1), None)
    assert not world.plan.engaged([entry])
    assert world.plan.engaged([PlanEntry(ref("a"), world.gang("a", 1), 10.0)])
