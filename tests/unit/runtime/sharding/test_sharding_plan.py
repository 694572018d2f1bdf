"""``next_step``: the one step the sharder takes for an object, rule by rule."""

from __future__ import annotations

import pytest

from crdkit.runtime.sharding import Action, Placement, next_step

LIVE = frozenset({"a", "b"})


@pytest.mark.parametrize("draining", [False, True])
@pytest.mark.parametrize("handshake", [True, False])
def test_an_unassigned_object_is_assigned_to_its_shard(draining: bool, handshake: bool) -> None:
    assert next_step(Placement(None, draining), "a", LIVE, handshake=handshake) == Action(
        "assign", "a"
    )


@pytest.mark.parametrize("draining", [False, True])
@pytest.mark.parametrize("handshake", [True, False])
def test_an_object_of_a_dead_shard_moves_at_once(draining: bool, handshake: bool) -> None:
    # "c" holds no live Lease: nobody reconciles its objects, so no drain is waited for.
    action = next_step(Placement("c", draining), "b", LIVE, handshake=handshake)
    assert action == Action("assign", "b")


@pytest.mark.parametrize("handshake", [True, False])
def test_an_object_on_its_shard_stays(handshake: bool) -> None:
    assert next_step(Placement("a"), "a", LIVE, handshake=handshake) is None


@pytest.mark.parametrize("handshake", [True, False])
def test_a_drain_asked_for_in_vain_is_taken_back(handshake: bool) -> None:
    # It was asked to leave "a", then the ring changed back: it stays where it is.
    assert next_step(Placement("a", True), "a", LIVE, handshake=handshake) == Action("undrain")


def test_an_object_of_a_live_shard_is_asked_to_drain_not_moved() -> None:
    action = next_step(Placement("a"), "b", LIVE)
    assert action == Action("drain")
    assert action is not None
    assert action.shard is None  # a drain names no target: the shard only lets go


def test_a_drain_not_yet_acknowledged_waits() -> None:
    assert next_step(Placement("a", True), "b", LIVE) is None


@pytest.mark.parametrize(
    "placement", [Placement(None), Placement("a"), Placement("a", True), Placement("c")]
)
@pytest.mark.parametrize("handshake", [True, False])
def test_with_no_live_shard_nothing_moves(placement: Placement, handshake: bool) -> None:
    assert next_step(placement, None, frozenset(), handshake=handshake) is None
    # a desired shard of None with live shards (an owned object with no owner in the ring)
    assert next_step(placement, None, LIVE, handshake=handshake) is None


@pytest.mark.parametrize("draining", [False, True])
def test_without_the_handshake_an_object_moves_between_live_shards_directly(
    draining: bool,
) -> None:
    assert next_step(Placement("a", draining), "b", LIVE, handshake=False) == Action("assign", "b")


def test_the_default_is_the_handshake() -> None:
    assert next_step(Placement("a"), "b", LIVE) == next_step(
        Placement("a"), "b", LIVE, handshake=True
    )
    assert next_step(Placement("a"), "b", LIVE) != next_step(
        Placement("a"), "b", LIVE, handshake=False
    )


def test_placements_and_actions_are_values() -> None:
    assert Placement("a") == Placement("a", draining=False) != Placement("a", draining=True)
    assert Action("assign", "a") != Action("assign", "b")
    assert hash(Action("drain")) == hash(Action("drain", None))
