"""`Outlook`: the expected starts of waiting gangs, made beside the pass, and the first promise
compared with the actual start (on a mirror in memory, times on a manual clock)."""

from __future__ import annotations

import factories
from crdkit.scheduling import ClusterMirror, GroupRef
from crdkit.scheduling.outlook import NOT_ADMITTED, UNBOUNDED, Outlook
from crdkit.scheduling.start_plan import PlanEntry

LEAF = "example.com/leaf"
NOW = 1_800_000_000.0


class World:
    """Two leaves of one 8-GPU node each, full: l0's pod ends at NOW+30, l1's never says."""

    def __init__(self, **outlook: object) -> None:
        self.mirror = ClusterMirror([LEAF], clock=lambda: 0.0)
        for leaf in ("l0", "l1"):
            self.mirror.set_node(factories.node(f"{leaf}-n0", rack=None, labels={LEAF: leaf}))
        self.ends: dict[str, float | None] = {}
        self.outlook = Outlook(self.mirror, "best-fit", acting=False, **outlook)  # type: ignore[arg-type]
        self.line: list[tuple[GroupRef, int]] = []

    def running(self, name: str, node: str, end: float | None) -> None:
        self.mirror.set_pod(factories.pod(name, gpus=8, node=node, phase="Running", uid=name))
        self.ends[f"ml/{name}"] = end

    def gang(self, name: str, bound: float | None = 60.0) -> tuple[PlanEntry, int]:
        record = self.mirror.cluster.compile(
            {
                "name": name,
                "priority": 0,
                "topology": {"mode": "unconstrained"},
                "tasks": [{"name": "w", "replicas": 1, "requests": {"nvidia.com/gpu": "8"}}],
            }
        )
        return PlanEntry(ref(name), record, bound), 0

    def waits(self, *entries: tuple[PlanEntry, int], now: float = NOW) -> None:
        """The pass left ``entries`` waiting, in line in that order."""
        self.line = [(entry.ref, priority) for entry, priority in entries]
        self.outlook.waiting(entries)
        self.outlook.estimate(lambda: self.line, self.ends.get, now, lambda *_: [])


def ref(name: str) -> GroupRef:
    return GroupRef("coscheduling", "ml", name)


def full(world: World) -> None:
    world.running("left", "l0-n0", NOW + 30)
    world.running("right", "l1-n0", None)


def test_a_waiting_gang_is_expected_when_the_room_it_needs_is_declared_free() -> None:
    world = World()
    full(world)
    world.waits(world.gang("a"))
    expected = world.outlook.expected(ref("a"))
    assert expected.start == NOW + 30
    assert expected.promised == NOW + 30
    assert world.outlook.note(ref("a")) == "; expected to start by 2027-01-15T08:00:30Z"
    # The gang behind it waits for the end of a's run: a takes l0 until NOW+90.
    world.waits(world.gang("a"), world.gang("b"))
    assert world.outlook.expected(ref("b")).start == NOW + 90


def test_a_start_is_unknown_when_the_room_is_held_by_pods_that_declare_no_end() -> None:
    world = World()
    world.running("left", "l0-n0", None)
    world.running("right", "l1-n0", None)
    world.waits(world.gang("a"))
    expected = world.outlook.expected(ref("a"))
    assert expected.start is None
    assert expected.note == UNBOUNDED
    assert world.outlook.note(ref("a")) == f"; expected start unknown: {UNBOUNDED}"


def test_a_gang_waiting_for_quota_is_not_given_a_start() -> None:
    world = World()
    full(world)
    world.outlook.refused([ref("a")])
    assert world.outlook.expected(ref("a")).note == NOT_ADMITTED


def test_only_the_first_gangs_in_line_are_estimated() -> None:
    world = World(depth=1)
    full(world)
    world.waits(world.gang("a"), world.gang("b"), world.gang("c"))
    assert world.outlook.expected(ref("a")).start == NOW + 30
    assert world.outlook.expected(ref("b")).start is None
    assert world.outlook.expected(ref("c")).note == "not estimated: 2 gangs wait ahead of it"


def test_estimates_are_made_again_only_when_due_or_when_a_gang_joins() -> None:
    world = World(every=5.0)
    full(world)
    a = world.gang("a")
    world.waits(a)
    world.mirror.remove_pod("ml/left")  # l0 is free now, but no estimate is due
    world.waits(a, now=NOW + 1)
    assert world.outlook.expected(ref("a")).start == NOW + 30
    world.waits(a, now=NOW + 5)  # due: promises only move earlier
    assert world.outlook.expected(ref("a")).start == NOW + 5
    assert world.outlook.expected(ref("a")).promised == NOW + 30  # the first is kept


def test_a_start_in_the_first_pass_after_its_promise_keeps_it_a_later_one_does_not() -> None:
    world = World()
    full(world)
    world.waits(world.gang("a"), world.gang("b"))
    outlook = world.outlook
    outlook.new_pass(NOW + 31)  # the first pass after a's promise (NOW+30)
    outlook.started(ref("a"), NOW + 31)
    outlook.new_pass(NOW + 91)
    outlook.new_pass(NOW + 95)  # b (promised NOW+90) misses the pass at NOW+91
    outlook.started(ref("b"), NOW + 95)
    kept = {record.gang.name: record.kept for record in outlook.starts}
    assert kept == {"a": True, "b": False}
    assert (outlook.kept, outlook.late) == (1, 1)
    assert outlook.expected(ref("a")).promised is None  # nothing is kept of a started gang
