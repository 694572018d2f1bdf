"""Properties of the kit's normalisation and write numbering."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from crdkit.testing.crashes import History, HistoryEvent
from crdkit.testing.crashes.cases import FAULT_KINDS, CrashCase
from crdkit.testing.crashes.normalise import normalise, normalise_state
from crdkit.testing.crashes.oracles import recreations
from crdkit.testing.crashes.writes import WriteLog

_names = st.text(alphabet="abcdefgh-", min_size=1, max_size=8)
_leaf = st.one_of(st.none(), st.booleans(), st.integers(), _names)
_json = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(_names, inner, max_size=3)
    ),
    max_leaves=12,
)


@st.composite
def objects(draw: st.DrawFn) -> dict[str, Any]:
    prefix = draw(_names)
    generated = draw(st.booleans())
    metadata: dict[str, Any] = {
        "name": prefix + draw(_names) if generated else prefix,
        "namespace": draw(st.sampled_from(["ns", "other"])),
        "uid": draw(_names),
        "resourceVersion": str(draw(st.integers(1, 99))),
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "ownerReferences": [{"kind": "Parent", "name": draw(_names), "uid": draw(_names)}],
    }
    if generated:
        metadata["generateName"] = prefix
    if draw(st.booleans()):
        metadata["deletionTimestamp"] = "2026-01-01T00:00:01Z"
    return {"kind": "Thing", "metadata": metadata, "spec": draw(_json), "status": draw(_json)}


@given(objects())
def test_normalising_is_idempotent(obj: dict[str, Any]) -> None:
    once = normalise(obj, namespace="ns")
    assert normalise(once, namespace="ns") == once
    assert "uid" not in once["metadata"]
    assert "resourceVersion" not in once["metadata"]


@given(objects(), st.text(alphabet="xyz0123", min_size=1, max_size=6), _names, _names)
def test_what_differs_by_chance_normalises_alike(
    obj: dict[str, Any], suffix: str, uid: str, version: str
) -> None:
    other = json.loads(json.dumps(obj))
    metadata = other["metadata"]
    metadata["uid"], metadata["resourceVersion"] = uid, version
    metadata["ownerReferences"][0]["uid"] = uid
    if "generateName" in metadata:
        metadata["name"] = metadata["generateName"] + suffix
    assert normalise_state([obj], namespace="ns") == normalise_state([other], namespace="ns")


_calls = st.lists(
    st.tuples(
        st.sampled_from(["POST", "PUT", "PATCH", "DELETE"]),
        st.sampled_from(["/api/v1/namespaces/ns/configmaps", "/apis/g/v1/namespaces/ns/things"]),
        st.one_of(st.none(), _names),
        st.sampled_from([None, "status"]),
    ),
    max_size=12,
)


def _number(calls: list[tuple[str, str, str | None, str | None]], suffixes: list[str]) -> list[Any]:
    log = WriteLog()
    for (method, collection, name, sub), suffix in zip(calls, suffixes, strict=False):
        path = f"{collection}/{name}" + (f"/{sub}" if sub else "") if name else collection
        body = json.dumps({"metadata": {"generateName": "g-", "uid": suffix}}).encode()
        log.number(method, path, body)
    return [write.identity for write in log.writes]


@given(
    _calls, st.lists(_names, min_size=12, max_size=12), st.lists(_names, min_size=12, max_size=12)
)
def test_the_numbering_of_writes_is_stable_between_identical_runs(
    calls: list[tuple[str, str, str | None, str | None]], first: list[str], second: list[str]
) -> None:
    # What the server makes of a write (uids, generated names) does not change its name.
    assert _number(calls, first) == _number(calls, second)


def test_writes_in_each_runs_own_namespace_are_named_alike() -> None:
    # On a real apiserver every run has a namespace of its own (ControlPlaneSite): a fault
    # planned on the fault-free run's write must find the same write in the faulted run.
    def named(namespace: str) -> list[Any]:
        log = WriteLog(namespace=namespace)
        log.number("POST", f"/api/v1/namespaces/{namespace}/pods/p/binding", b"{}")
        log.number("PATCH", "/api/v1/namespaces/other/pods/p", b"{}")
        return [write.identity for write in log.writes]

    assert named("crash-1a2b") == named("crash-3c4d")
    assert named("crash-1a2b")[0][2] == "<namespace>"
    assert named("crash-1a2b")[1][2] == "other"  # another namespace keeps its name


@given(st.sampled_from(FAULT_KINDS), st.integers(1, 10_000))
def test_a_case_reads_back_from_its_name(kind: Any, index: int) -> None:
    case = CrashCase(kind, index)
    assert CrashCase.parse(str(case)) == case


def test_a_child_made_again_for_an_owner_already_gone_is_no_recreation() -> None:
    def event(seq: int, type_: str, kind: str, name: str, uid: str, owner: str = "") -> Any:
        metadata: dict[str, Any] = {"name": name, "namespace": "ns", "uid": uid}
        if owner:
            metadata["ownerReferences"] = [
                {"kind": "Parent", "name": "p", "uid": owner, "controller": True}
            ]
        return HistoryEvent(seq, type_, kind, {"kind": kind, "metadata": metadata})

    base = [
        event(1, "ADDED", "Parent", "p", "p1"),
        event(2, "ADDED", "ConfigMap", "c", "c1", "p1"),
    ]
    # The owner lives: a child deleted and made again is a recreation.
    again = [*base, event(3, "DELETED", "ConfigMap", "c", "c1", "p1")]
    again.append(event(4, "ADDED", "ConfigMap", "c", "c2", "p1"))
    assert len(recreations(History("ns", base), History("ns", again))) == 1
    # The owner is gone: the child made again for it is garbage, not a recreation.
    late = [*base, event(3, "DELETED", "Parent", "p", "p1")]
    late += [event(4, "DELETED", "ConfigMap", "c", "c1", "p1")]
    late += [event(5, "ADDED", "ConfigMap", "c", "c2", "p1")]
    assert recreations(History("ns", base), History("ns", late)) == []
