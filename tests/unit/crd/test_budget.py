"""The cost budget over a whole schema: cardinality, per-rule and per-schema limits, remedies."""

from __future__ import annotations

from typing import Any

from crdkit.crd.budget import (
    PER_RULE_LIMIT,
    budget_problems,
    rule_costs,
    unestimated_rules,
)
from crdkit.crd.cel_types import MAX_REQUEST_SIZE

RULE = "self.a.startsWith('x')"  # costs 3 wherever it is


def node(*rules: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": r} for r in rules],
        **extra,
    }


def spec(value: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object",
                                                      "properties": {"x": value}}}}  # fmt: skip


def test_bounded_lists_and_maps_multiply_the_cost() -> None:
    inner = {"type": "object", "additionalProperties": node(RULE), "maxProperties": 7}
    (found,) = rule_costs(spec({"type": "array", "maxItems": 5, "items": inner}))
    assert (found.path, found.cardinality, found.cost) == (".spec.x[*][*]", 35, 105)
    assert found.containers == ()


def test_any_unbounded_container_gives_what_fits_a_request() -> None:
    bounded_inside = {"type": "array", "maxItems": 2, "items": node(RULE)}
    (found,) = rule_costs(spec({"type": "array", "items": bounded_inside}))
    # the rule's own value: an object of at least "{}", and a comma
    assert found.cardinality == MAX_REQUEST_SIZE // 3
    assert found.containers == (".spec.x",)


def test_a_rule_over_budget_names_its_field_and_the_remedy() -> None:
    schema = spec({"type": "array", "items": node("self.a.matches('^a+$')")})
    (problem, total) = budget_problems(schema)
    assert problem.startswith(".spec.x[*]: x-kubernetes-validations[0].rule: CEL rule ")
    assert "over the apiserver's budget of 10,000,000 by more than 100x" in problem
    assert "bound the list/map around it (.spec.x) with MaxItems/MaxProperties" in problem
    assert "bound what it reads (self.a) with MaxLength" in problem
    assert total.startswith(".: the CEL rules total an estimated cost of ")


def test_the_total_per_schema_has_its_own_budget() -> None:
    under_each = PER_RULE_LIMIT // 3
    schema = spec({"type": "array", "maxItems": under_each, "items": node(*[RULE] * 11)})
    (problem,) = budget_problems(schema)
    assert "per schema by 1.100000x" in problem  # as the apiserver words it
    assert ".spec.x[*]: x-kubernetes-validations[0].rule (9,999,999)" in problem
    assert budget_problems(spec({"type": "array", "maxItems": under_each,
                                 "items": node(*[RULE] * 10)})) == []  # fmt: skip


def test_a_message_expression_counts_once() -> None:
    rule = {"rule": RULE, "messageExpression": "'bad: ' + self.a"}
    value = node() | {"x-kubernetes-validations": [rule]}
    rule_cost, message_cost = rule_costs(spec({"type": "array", "maxItems": 10, "items": value}))
    assert (rule_cost.cost, rule_cost.cardinality) == (30, 10)
    assert message_cost.message_expression
    assert message_cost.cardinality == 1
    assert message_cost.where == ".spec.x[*]: x-kubernetes-validations[0].messageExpression"


def test_rules_not_modelled_are_listed_not_counted() -> None:
    schema = spec(node("cel.bind(v, self.a, v == 'b')", RULE))
    (unknown,) = unestimated_rules(schema)
    assert unknown.where == ".spec.x: x-kubernetes-validations[0].rule"
    assert unknown.reason is not None
    assert "cel.bind" in unknown.reason
    assert budget_problems(schema) == []


def test_the_resource_root_sees_metadata_names() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-validations": [{"rule": "self.spec.p.startsWith(self.metadata.name)"}],
        "properties": {"spec": {"type": "object", "properties": {"p": {"type": "string"}}}},
    }
    (found,) = rule_costs(schema)
    assert (found.path, found.cardinality) == (".", 1)
    # two selections of 3, and the prefix traversed: a name is at most 253 characters
    assert found.cost == 6 + 102
    assert found.unbounded == ()  # self.spec.p is read, but only the name's size weighs
