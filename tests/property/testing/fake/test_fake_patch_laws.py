"""Laws of the fake apiserver's patches, on arbitrary JSON documents."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from crdkit.testing.fake.patch import apply_json_patch, apply_merge_patch

KEYS = st.sampled_from(["a", "b", "c"])
SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3)
JSON = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3)
)
OBJECTS = st.dictionaries(KEYS, JSON, max_size=4)


@given(OBJECTS, OBJECTS)
def test_a_merge_patch_applied_twice_is_applied_once(target: Any, patch: Any) -> None:
    once = apply_merge_patch(target, patch)
    assert apply_merge_patch(once, patch) == once


@given(OBJECTS, OBJECTS)
def test_a_merge_patch_sets_every_non_null_leaf_and_removes_nulls(target: Any, patch: Any) -> None:
    patched = apply_merge_patch(target, patch)
    for key, value in patch.items():
        if value is None:
            assert key not in patched
        elif not isinstance(value, dict):
            assert patched[key] == value


@given(OBJECTS, st.sampled_from(["x", "y"]), JSON)
def test_json_patch_add_then_remove_restores_the_document(
    target: Any, key: str, value: Any
) -> None:
    ops = [{"op": "add", "path": f"/{key}", "value": value}, {"op": "remove", "path": f"/{key}"}]
    assert apply_json_patch(target, ops) == target
