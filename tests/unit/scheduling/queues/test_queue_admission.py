"""Admission in fair-share order and the reclaim rule, on the quota tree alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from crdkit.scheduling.preemption import RunningGang, VictimPod
from crdkit.scheduling.queues.admission import Ask, admit_in_order
from crdkit.scheduling.queues.gate import QueueGate
from crdkit.scheduling.queues.reclaim import reclaim_rule
from crdkit.scheduling.queues.tree import FlavorDef, Limits, QueueDef, QuotaTree

GPU = "nvidia.com/gpu"
FR = ("gpu", GPU)


def queue(name: str, parent: str | None, gpus: int, weight: float = 1.0) -> QueueDef:
    return QueueDef(name, parent, weight, (FlavorDef("gpu", {}, {GPU: Limits(gpus * 1000)}),))


TEAMS = [
    queue("org", None, 64),
    queue("team-a", "org", 64),
    queue("team-b", "org", 64),
    queue("team-c", "org", 64, weight=2.0),
]


def asks(team: str, count: int, gpus: int = 64) -> list[Ask]:
    return [Ask(f"{team}-{i}", team, {GPU: gpus * 1000}, 0, i) for i in range(count)]


def test_the_surplus_goes_by_weight_once_every_queue_has_its_quota() -> None:
    tree = QuotaTree(TEAMS)
    used = {team: {FR: 64_000} for team in ("team-a", "team-b", "team-c")}
    verdict = admit_in_order(
        tree, used, [*asks("team-a", 4, 8), *asks("team-b", 4, 8), *asks("team-c", 8, 8)],
        lambda ask, flavor: True,
    )  # fmt: skip
    taken = {t: sum(a.queue == t for a, _ in verdict.admitted) for t in ("team-a", "team-b")}
    assert taken == {"team-a": 2, "team-b": 2}  # 16 GPUs each of the cohort's 64
    assert sum(a.queue == "team-c" for a, _ in verdict.admitted) == 4  # 32: weight 2
    assert len(verdict.refused) == 8
    refusal = verdict.refused["team-c-4"]
    assert refusal.reason == (
        "queue team-c: 96 of 64 nvidia.com/gpu in use (32 borrowed); the gang needs 8, and "
        "its cohort org lends 0"
    )
    assert refusal.reclaims is None  # beyond its nominal quota: it may not reclaim


def test_a_gang_within_its_queues_quota_is_refused_but_may_reclaim() -> None:
    tree = QuotaTree(TEAMS)
    used = {"team-a": {FR: 128_000}, "team-b": {FR: 128_000}}
    verdict = admit_in_order(tree, used, asks("team-c", 1), lambda ask, flavor: True)
    assert verdict.refused["team-c-0"].reclaims == "gpu"


def test_queues_that_cannot_admit_say_why() -> None:
    tree = QuotaTree([*TEAMS, queue("lost", "gone", 8)])
    verdict = admit_in_order(
        tree,
        {},
        [Ask("x", "nope", {}), Ask("y", "org", {}), Ask("z", "lost", {})],
        lambda ask, flavor: True,
    )
    assert verdict.refused["x"].reason == "queue nope does not exist"
    assert verdict.refused["y"].reason.startswith("queue org is a cohort")
    assert verdict.refused["z"].reason == (
        "queue lost cannot admit gangs: its parent queue gone does not exist"
    )


def gang(ref: str, gpus: int, age_s: int) -> RunningGang:
    created = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=age_s)
    pods = tuple(VictimPod(f"ml/{ref}-{i}", f"n{i}", {GPU: 8000}, None) for i in range(gpus // 8))
    return RunningGang(ref, 0, created, pods)


class _Book:
    def version(self) -> int:
        return 0

    def queues(self) -> list[QueueDef]:
        return TEAMS


def test_reclaim_takes_a_borrower_only_while_it_still_borrows() -> None:
    gate = QueueGate(_Book(), None, lambda: [], lambda text: (None, []))  # type: ignore[arg-type]
    gate.new_pass()
    borrowers = [gang(f"a{i}", 32, i) for i in range(6)]  # team-a: 192 of its 64
    gate.usage = {"team-a": {FR: 192_000}, "team-b": {FR: 64_000}}  # the cohort's 256, all
    gate.holdings = {g.ref: ("team-a", {FR: 32_000}) for g in borrowers}
    gate.holdings["b0"] = ("team-b", {FR: 64_000})
    rule = reclaim_rule(gate, Ask("c", "team-c", {GPU: 64_000}), "gpu")
    assert rule.eligible is not None
    assert [rule.eligible(g) for g in borrowers] == [True] * 6
    assert not rule.eligible(gang("b0", 64, 0))  # team-b uses only its own quota
    assert rule.admits(borrowers[3], borrowers[:3])  # team-a still over: 96 of 64
    assert not rule.admits(borrowers[4], borrowers[:4])  # down to its 64: no more of it
    assert not rule.enough(borrowers[:1])
    assert rule.enough(borrowers[:2])
    youngest_first = sorted(borrowers, key=rule.order)
    assert youngest_first[0].ref == "a5"


def test_fair_share_preemption_stops_before_the_victims_queue_falls_below_the_preemptors() -> None:
    gate = QueueGate(_Book(), None, lambda: [], lambda text: (None, []))  # type: ignore[arg-type]
    gate.new_pass()
    borrowers = [gang(f"a{i}", 32, i) for i in range(5)]  # team-a: 160 of its 64
    gate.usage = {"team-a": {FR: 160_000}, "team-c": {FR: 96_000}}  # team-c: 96 of its 64
    gate.holdings = {g.ref: ("team-a", {FR: 32_000}) for g in borrowers}
    ask = Ask("c", "team-c", {GPU: 32_000})
    rule = reclaim_rule(gate, ask, "gpu", "fair")
    tree = gate.tree
    # With the gang, team-c borrows 64 of the tree's 256 at weight 2: a share of 0.125.
    assert tree.share("team-c", {"team-c": {FR: 128_000}}) == 0.125
    assert rule.eligible is not None
    assert all(rule.eligible(g) for g in borrowers)  # team-a: 96 borrowed, a share of 0.375
    # Each of team-a's gangs taken leaves it 0.125 less; one is taken while team-a's share
    # before losing it is above team-c's 0.125 with the gang: 0.375, then 0.25, not 0.125.
    assert rule.admits(borrowers[0], [])
    assert rule.admits(borrowers[1], borrowers[:1])
    assert not rule.admits(borrowers[2], borrowers[:2])
    assert not reclaim_rule(gate, Ask("a", "team-a", {GPU: 32_000}), "gpu", "fair").eligible(
        gang("c0", 32, 0)
    )  # team-c has no gang held for it to lose
