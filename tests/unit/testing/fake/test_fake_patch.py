"""The fake apiserver's patch formats, on the RFCs' own examples."""

from __future__ import annotations

import pytest

from crdkit.testing.fake.patch import (
    PatchError,
    apply_json_patch,
    apply_merge_patch,
    merge_applied,
)


def test_merge_patch_rfc7386_examples() -> None:
    cases = [
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ]
    for target, patch, want in cases:
        assert apply_merge_patch(target, patch) == want, (target, patch)


def test_merge_patch_leaves_its_inputs_alone() -> None:
    target = {"a": {"b": 1}}
    patch = {"a": {"c": 2}}
    apply_merge_patch(target, patch)
    assert target == {"a": {"b": 1}}
    assert patch == {"a": {"c": 2}}


def test_json_patch_operations() -> None:
    doc = {"foo": ["bar", "baz"], "x": {"y": 1}}
    ops = [
        {"op": "add", "path": "/foo/1", "value": "qux"},
        {"op": "add", "path": "/foo/-", "value": "end"},
        {"op": "remove", "path": "/foo/0"},
        {"op": "replace", "path": "/x/y", "value": 2},
        {"op": "copy", "from": "/x", "path": "/copied"},
        {"op": "move", "from": "/x/y", "path": "/moved"},
        {"op": "test", "path": "/moved", "value": 2},
        {"op": "add", "path": "/a~1b", "value": "slash"},
    ]
    assert apply_json_patch(doc, ops) == {
        "foo": ["qux", "baz", "end"],
        "x": {},
        "copied": {"y": 2},
        "moved": 2,
        "a/b": "slash",
    }
    assert doc == {"foo": ["bar", "baz"], "x": {"y": 1}}  # untouched
    assert apply_json_patch(doc, [{"op": "replace", "path": "", "value": 3}]) == 3


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ([{"op": "test", "path": "/a", "value": 2}], "differs"),
        ([{"op": "remove", "path": "/missing"}], "cannot remove"),
        ([{"op": "replace", "path": "/missing", "value": 1}], "missing value"),
        ([{"op": "add", "path": "/l/5", "value": 1}], "out of bounds"),
        ([{"op": "add", "path": "/l/01", "value": 1}], "invalid array index"),
        ([{"op": "add", "path": "a", "value": 1}], "invalid JSON pointer"),
        ([{"op": "add", "path": "/a"}], "missing 'value'"),
        ([{"op": "frob", "path": "/a"}], "unknown op"),
        ([{"path": "/a"}], "not an object with an 'op'"),
        ({"op": "add"}, "list of operations"),
    ],
)
def test_json_patch_failures_name_the_problem(ops: object, message: str) -> None:
    with pytest.raises(PatchError, match=message):
        apply_json_patch({"a": 1, "l": [0]}, ops)


def test_apply_merges_maps_and_replaces_lists_keeping_nulls_as_values() -> None:
    current = {"data": {"a": "1", "b": "2"}, "list": [1, 2]}
    applied = {"data": {"a": "x"}, "list": [3]}
    assert merge_applied(current, applied) == {"data": {"a": "x", "b": "2"}, "list": [3]}
