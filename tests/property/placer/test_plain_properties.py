"""`crdkit place`'s pydantic-free reader against the contract's models.

Documents are drawn valid, then bent at random places: a field set to a value of another type
(a string number, a boolean, ``None``, a float), a field dropped, a key added (unknown, or the
Python name the models also take). Whenever `place_plainly` answers, the models' path answers
the same: the same placements, or the same one-line error. When it declines (``None``), the
command falls back to the models, so there is nothing of its own to compare.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st
from placer_strategies import clusters, gangs

from crdkit.placer import Cluster
from crdkit.placer.plain import place_plainly, plain_gang, plain_snapshot

ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    3,
    2**64,
    1.5,
    2.0,
    "",
    "x",
    "2",
    "1Gi",
    "required",
    "NoSchedule",
    "Exists",
    [],
    ["n001"],
    {},
    {"a": "b"},
    {"a": 1},
    {"mode": "required"},
    {"level": "t.io/rack", "size": 2},
]
ODD_KEYS = ["min_available", "node_selector", "max_per_node", "avoid_nodes", "slice_", "zzz"]


def _containers(document: Any) -> list[Any]:
    """Every dict and list of a document, itself included."""
    found = []
    stack = [document]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            found.append(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            found.append(value)
            stack.extend(value)
    return found


def _odd(draw: st.DrawFn) -> Any:
    """One of the odd values, a copy of its own: a later change must not reach the shared one."""
    return copy.deepcopy(draw(st.sampled_from(ODD_VALUES)))


@st.composite
def bent(draw: st.DrawFn, document: Any) -> Any:
    """``document`` with 0-2 random changes at random places."""
    document = copy.deepcopy(document)
    for _ in range(draw(st.integers(0, 2))):
        target = draw(st.sampled_from(_containers(document)))
        if isinstance(target, list):
            if target:
                target[draw(st.integers(0, len(target) - 1))] = _odd(draw)
            continue
        action = draw(st.sampled_from(["set", "drop", "add"]))
        if action == "add" or not target:
            target[draw(st.sampled_from([*ODD_KEYS, *target]))] = _odd(draw)
        elif action == "drop":
            del target[draw(st.sampled_from(sorted(target)))]
        else:
            target[draw(st.sampled_from(sorted(target)))] = _odd(draw)
    return document


@st.composite
def invocations(draw: st.DrawFn) -> tuple[Any, list[Any], str, bool]:
    cluster = draw(clusters(max_nodes=6))
    levels = list(cluster["levels"])
    batch = draw(st.booleans())
    count = draw(st.integers(1, 3)) if batch else 1
    drawn = [draw(gangs(levels, name=f"g{index}")) for index in range(count)]
    policy = draw(st.sampled_from(["best-fit", "least-free", "binpack", "keep-whole"]))
    return draw(bent(cluster)), [draw(bent(gang)) for gang in drawn], policy, batch


def _answer(call: Any) -> tuple[str, Any]:
    try:
        return "placed", call()
    except ValueError as error:
        return "refused", str(error)


def _with_models(cluster: Any, gangs: list[Any], policy: Any, batch: bool) -> list[Any]:
    model = Cluster.from_snapshot(cluster)
    if batch:
        return [placement.to_dict() for placement in model.place_all(gangs, policy)]
    return [model.place(gangs[0], policy).to_dict()]


@given(invocations())
def test_the_plain_reader_agrees_with_the_models(
    invocation: tuple[Any, list[Any], str, bool],
) -> None:
    cluster, gangs, policy, batch = invocation
    plain = _answer(lambda: place_plainly(cluster, gangs, policy, batch=batch))
    if plain == ("placed", None):
        event("left to the models")
        return
    event(f"plain: {plain[0]}")
    assert plain == _answer(lambda: _with_models(cluster, gangs, policy, batch))


@given(st.data())
def test_what_the_plain_reader_takes_the_models_take(data: st.DataObject) -> None:
    cluster = data.draw(clusters(max_nodes=4))
    gang = data.draw(gangs(list(cluster["levels"])))
    cluster, gang = data.draw(bent(cluster)), data.draw(bent(gang))
    from crdkit.placer.models import ClusterSnapshot, Gang, validated

    if plain_snapshot(cluster) is not None:
        validated(ClusterSnapshot, cluster, "cluster")  # raises if the models refuse it
    if plain_gang(gang) is not None:
        validated(Gang, gang, "gang")
