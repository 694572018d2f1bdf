"""Invariants of the offline CEL cost estimate."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from crdkit.crd import AtMostOneOf, ExactlyOneOf
from crdkit.crd.cel import cel_field
from crdkit.crd.cel_cost import estimate_rule
from crdkit.crd.cel_types import decl_type
from crdkit.crd.errors import SchemaError
from crdkit.crd.unions import merge_variants

NAMES = st.from_regex(r"[a-z][a-zA-Z0-9]{0,8}", fullmatch=True).filter(
    lambda n: n not in ("in", "as", "if", "for", "var", "let", "null", "true", "false")
)
RULES = [
    "self.a.matches('^[a-z]+$')",
    "self.a == self.b",
    "self.tags.all(t, t.startsWith(self.a))",
    "self.tags.exists_one(t, t.contains(self.b))",
    "self.tags.map(t, t.lowerAscii()).exists(u, u == self.a)",
    "self.tags.join('-').size() < 10 && self.a.split('.').size() > 1",
    "'x' in self.tags && self.a.replace('a', 'bb') != self.b",
]


def holder(max_length: int | None, max_items: int | None) -> Any:
    text: dict[str, Any] = {"type": "string"} | ({"maxLength": max_length} if max_length else {})
    tags: dict[str, Any] = {"type": "array", "items": text}
    if max_items:
        tags["maxItems"] = max_items
    return decl_type({"type": "object", "properties": {"a": text, "b": text, "tags": tags}})


@given(st.lists(NAMES, min_size=2, max_size=8, unique=True))
def test_presence_rules_cost_two_a_field(names: list[str]) -> None:
    self_type = decl_type({"type": "object", "properties": {n: {"type": "string"} for n in names}})
    assert estimate_rule(ExactlyOneOf(*names).rule, self_type).cost == 2 * len(names)
    assert estimate_rule(AtMostOneOf(*names).rule, self_type).cost == 2 * len(names)


@given(st.lists(st.lists(NAMES, min_size=1, max_size=3, unique=True), min_size=2, max_size=5))
def test_union_rules_are_cheaper_than_the_list_spelling(fields: list[list[str]]) -> None:
    variants = [
        (f"V{i}", {"properties": {f"{n}{i}": {"type": "string"} for n in names},
                   "required": [f"{n}{i}" for n in names]})
        for i, names in enumerate(fields)
    ]  # fmt: skip

    def error(where: str, why: str) -> SchemaError:
        return SchemaError("U", where, why)

    merged = merge_variants(variants, None, error)
    self_type = decl_type(merged)
    rule = merged["x-kubernetes-validations"][0]["rule"]
    conditions = [
        " && ".join(
            [f"has(self.{cel_field(p)})" for p in sorted(v["required"])]
            + [
                f"!has(self.{cel_field(p)})"
                for p in sorted(set(merged["properties"]) - set(v["properties"]))
            ]
        )
        for _, v in variants
    ]
    old = "[" + ", ".join(conditions) + "].exists_one(v, v)"
    assert estimate_rule(rule, self_type).cost < estimate_rule(old, self_type).cost


@given(
    st.sampled_from(RULES),
    st.integers(1, 10_000),
    st.integers(0, 10_000),
    st.integers(1, 1_000),
)
def test_larger_bounds_never_cost_less(rule: str, length: int, more: int, items: int) -> None:
    low = estimate_rule(rule, holder(length, items)).cost
    assert low <= estimate_rule(rule, holder(length + more, items)).cost
    assert low <= estimate_rule(rule, holder(length, items + more)).cost
    assert low <= estimate_rule(rule, holder(None, None)).cost
