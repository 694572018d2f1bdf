"""The quota tree's arithmetic: subtree quotas, lending and borrowing limits, nested cohorts,
broken parents, and the weighted share."""

from __future__ import annotations

from crdkit.scheduling.queues.tree import FlavorDef, Limits, QueueDef, QuotaTree

GPU = "nvidia.com/gpu"
FR = ("h100", GPU)


def queue(
    name: str,
    parent: str | None = None,
    nominal: int = 0,
    *,
    borrowing: int | None = None,
    lending: int | None = None,
    weight: float = 1.0,
) -> QueueDef:
    limits = Limits(
        nominal * 1000,
        None if borrowing is None else borrowing * 1000,
        None if lending is None else lending * 1000,
    )
    return QueueDef(name, parent, weight, (FlavorDef("h100", {}, {GPU: limits}),))


def used(**gpus: int) -> dict[str, dict[tuple[str, str], int]]:
    return {name.replace("_", "-"): {FR: count * 1000} for name, count in gpus.items()}


def test_a_queue_alone_may_use_its_nominal_quota_and_no_more() -> None:
    tree = QuotaTree([queue("a", nominal=64)])
    assert tree.available("a", FR, used(a=60)) == 4_000
    assert tree.borrowed("a", FR, used(a=60)) == 0


def test_queues_of_a_cohort_borrow_what_the_others_leave_unused() -> None:
    tree = QuotaTree([queue("org"), queue("a", "org", 64), queue("b", "org", 64)])
    assert tree.subtree_quota("org", FR) == 128_000
    assert tree.available("a", FR, used(b=16)) == 112_000
    assert tree.available("a", FR, used(a=100, b=16)) == 12_000
    assert tree.borrowed("a", FR, used(a=100, b=16)) == 36_000
    assert tree.lent("b", FR, used(a=100, b=16)) == 36_000


def test_a_borrowing_limit_caps_what_a_queue_takes_beyond_its_quota() -> None:
    tree = QuotaTree([queue("org"), queue("a", "org", 64, borrowing=8), queue("b", "org", 64)])
    assert tree.available("a", FR, used()) == 72_000
    assert tree.available("a", FR, used(a=70)) == 2_000


def test_a_lending_limit_keeps_the_rest_of_the_quota_for_its_queue() -> None:
    tree = QuotaTree([queue("org"), queue("a", "org", 64, lending=16), queue("b", "org", 64)])
    assert tree.keeps("a", FR) == 48_000
    assert tree.subtree_quota("org", FR) == 80_000  # b's 64 and the 16 a lends
    assert tree.available("b", FR, used()) == 80_000  # never a's kept 48
    assert tree.available("a", FR, used(b=80)) == 48_000


def test_cohorts_nest_with_quota_at_each_level() -> None:
    tree = QuotaTree(
        [
            queue("org", nominal=32),
            queue("research", "org", borrowing=16),
            queue("prod", "org", 64),
            queue("vision", "research", 32),
            queue("speech", "research", 32),
        ]
    )
    assert tree.subtree_quota("research", FR) == 64_000
    assert tree.subtree_quota("org", FR) == 160_000
    # research as a whole may take its 64 and borrow 16 more, whatever prod leaves idle.
    assert tree.available("vision", FR, used()) == 80_000
    assert tree.available("vision", FR, used(speech=32)) == 48_000
    assert tree.leaves_under("org") == ["prod", "speech", "vision"]
    assert tree.path("vision") == ["vision", "research", "org"]


def test_missing_parents_and_cycles_break_the_queues_on_them() -> None:
    tree = QuotaTree(
        [queue("x", "y"), queue("y", "x"), queue("z", "w"), queue("under", "z"), queue("ok")]
    )
    assert tree.broken["x"] == "its parents form a cycle (x → y → x)"
    assert tree.broken["z"] == "its parent queue w does not exist"
    assert tree.broken["under"] == "the queue above it, w, does not exist"
    assert "ok" not in tree.broken


def test_the_share_is_what_a_queue_borrows_over_the_tree_by_weight() -> None:
    tree = QuotaTree(
        [queue("org", nominal=64), queue("a", "org", 64), queue("c", "org", 64, weight=2.0)]
    )
    assert tree.share("a", used(a=64)) == 0.0
    assert tree.share("a", used(a=96)) == 32 / 192
    assert tree.share("c", used(c=96)) == 32 / 192 / 2
    zero = QuotaTree([queue("org", nominal=8), queue("z", "org", 0, weight=0.0)])
    assert zero.share("z", used(z=1)) == float("inf")
