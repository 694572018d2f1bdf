"""The page's deltas: what changed between two snapshots, and applying it gives the newer one
(the browser's ``app.js`` applies a delta the same way as `apply`)."""

from __future__ import annotations

import itertools
import json

from hypothesis import given
from hypothesis import strategies as st

from crdkit.scheduling.ui.delta import apply, delta, slide
from crdkit.scheduling.ui.preview import step, synthetic_snapshot
from crdkit.scheduling.view.format import Snapshot


def _copy(snapshot: Snapshot) -> Snapshot:
    copied: Snapshot = json.loads(json.dumps(snapshot))
    return copied


def test_only_the_changed_nodes_and_lists_are_sent() -> None:
    old = synthetic_snapshot(64, seed=1, now=1000.0)
    new = _copy(old)
    new["seq"], new["time"] = 2, 1001.0
    new["nodes"][5]["jobs"] = [{"job": "ns/other", "amount": 8}]
    new["nodes"][9]["held"] = "ns/big"
    change = delta(old, new)
    assert change is not None
    assert [node["name"] for node in change.get("nodes", [])] == ["gpu-0005", "gpu-0009"]
    assert "gangs" not in change
    assert "queues" not in change
    assert "timeline" not in change
    assert (change["seq"], change["time"]) == (2, 1001.0)
    assert apply(old, change) == new


def test_a_bounded_list_slides_by_what_fell_off_and_what_came() -> None:
    assert slide([1, 2, 3], [2, 3, 4, 5]) == {"drop": 1, "add": [4, 5]}
    assert slide([1, 2, 3], [1, 2, 3, 4]) == {"drop": 0, "add": [4]}
    assert slide([], [1]) == {"drop": 0, "add": [1]}
    assert slide([1, 2], []) == {"drop": 2, "add": []}
    # Rewritten rather than moved on: sent whole.
    assert slide([1, 2, 3], [9, 8]) == {"drop": 3, "add": [9, 8]}
    # A repeated value must not fool it: [1, 1] then [1, 2] keeps one 1.
    assert slide([1, 1], [1, 2]) == {"drop": 1, "add": [2]}


def test_another_node_set_or_level_is_sent_whole() -> None:
    old = synthetic_snapshot(32, seed=2, now=1000.0)
    fewer = _copy(old)
    fewer["nodes"].pop()
    assert delta(old, fewer) is None
    renamed = _copy(old)
    renamed["nodes"][0]["name"] = "elsewhere"
    assert delta(old, renamed) is None
    relevelled = _copy(old)
    relevelled["levels"] = ["rack"]
    assert delta(old, relevelled) is None


def test_apply_leaves_the_old_snapshot_alone() -> None:
    old = synthetic_snapshot(32, seed=3, now=1000.0)
    kept = _copy(old)
    new = step(old, seed=7, fraction=0.5)
    change = delta(old, new)
    assert change is not None
    assert apply(old, change) == new
    assert old == kept


@given(
    seed=st.integers(0, 2**16),
    fractions=st.lists(st.sampled_from([0.0, 0.01, 0.05, 0.3, 1.0]), min_size=1, max_size=12),
    window=st.integers(1, 6),
)
def test_applying_each_delta_to_the_first_snapshot_gives_every_later_one(
    seed: int, fractions: list[float], window: int
) -> None:
    snapshots = [synthetic_snapshot(48, seed=seed, now=1000.0, queues=seed % 2 == 0)]
    for index, fraction in enumerate(fractions):
        moved = step(snapshots[-1], seed=seed + index, fraction=fraction)
        # A short window so that points fall off the front, as the scheduler's do.
        moved["timeline"] = moved["timeline"][-window:]
        moved["starts"] = moved["starts"][-window:]
        snapshots.append(moved)
    # What the page holds is JSON: apply to the decoded form, as the browser does.
    held = _copy(snapshots[0])
    for previous, current in itertools.pairwise(snapshots):
        change = delta(previous, current)
        assert change is not None
        held = apply(held, json.loads(json.dumps(change)))
        assert held == current
