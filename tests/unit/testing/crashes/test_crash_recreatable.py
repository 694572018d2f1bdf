"""``Scenario.recreatable``: kinds the recreation oracle leaves alone (a gang's pods rolled back
and made again under their names), and only those; ``Scenario.end_view``: what of the end state
is compared."""

from __future__ import annotations

from typing import Any

from crdkit.testing.crashes import History, HistoryEvent
from crdkit.testing.crashes.oracles import check_run, end_state_differences, recreations


def _history(*events: tuple[str, str, str, str]) -> History:
    history = History("ns")
    for type_, kind, name, uid in events:
        obj = {"kind": kind, "metadata": {"name": name, "namespace": "ns", "uid": uid}}
        history.events.append(HistoryEvent(len(history.events) + 1, type_, kind, obj))
    return history


def test_a_kind_named_recreatable_may_be_deleted_and_made_again() -> None:
    baseline = _history(("ADDED", "Pod", "m", "1"), ("ADDED", "ConfigMap", "c", "2"))
    faulted = _history(
        ("ADDED", "Pod", "m", "1"),
        ("DELETED", "Pod", "m", "1"),
        ("ADDED", "Pod", "m", "3"),
        ("ADDED", "ConfigMap", "c", "2"),
        ("DELETED", "ConfigMap", "c", "2"),
        ("ADDED", "ConfigMap", "c", "4"),
    )
    assert len(recreations(baseline, faulted)) == 2
    assert [p.split(" was")[0] for p in recreations(baseline, faulted, {"Pod"})] == ["ConfigMap c"]
    assert check_run(baseline, faulted, (), recreatable={"Pod", "ConfigMap"}) == []


def test_an_end_view_compares_only_what_it_keeps() -> None:
    def pod(node: str | None) -> dict[str, Any]:
        return {"kind": "Pod", "metadata": {"name": "m"}, "spec": {"nodeName": node}}

    def bound(obj: dict[str, Any]) -> dict[str, Any]:
        obj["spec"]["nodeName"] = "<node>" if obj["spec"]["nodeName"] else None
        return obj

    expected, on_other_node, unbound = (
        History("ns", end_state=[pod(n)]) for n in ("n0", "n1", None)
    )
    assert end_state_differences(expected, on_other_node) != []
    assert end_state_differences(expected, on_other_node, bound) == []
    assert end_state_differences(expected, unbound, bound) != []
    assert expected.end_state == [pod("n0")]  # the view saw a copy
