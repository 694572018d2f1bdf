"""The apiserver's CEL cost budget, checked offline.

Creating a CRD, the apiserver (apiextensions ``validation.go``, Kubernetes 1.37) estimates each
rule's worst-case cost (``crdkit.crd.cel_cost``) and multiplies it by how many times the rule
may run in one object: the product of ``maxItems``/``maxProperties`` of the lists and maps
around it, or, if one of them has no bound, as many copies of the rule's value as fit in a
3 MiB request (``crdkit.crd.cel_types.max_cardinality``). A rule over 10,000,000 is refused,
and so is a version whose rules (and message expressions) total over 100,000,000; the answer
is a 422 "exceeds budget by factor of ...". ``budget_problems`` reports the same offline, with
the bounds that would bring the rule down.

A rule the estimator does not model is not counted and is listed by ``unestimated_rules``:
the apiserver alone decides it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crdkit.crd.cel_cost import NotEstimated, estimate_rule
from crdkit.crd.cel_types import Decl, decl_type, max_cardinality

__all__ = [
    "PER_CRD_LIMIT",
    "PER_RULE_LIMIT",
    "RuleCost",
    "budget_problems",
    "rule_costs",
    "unestimated_rules",
]

PER_RULE_LIMIT = 10_000_000  # StaticEstimatedCostLimit
PER_CRD_LIMIT = 100_000_000  # StaticEstimatedCRDCostLimit
_U64 = 2**64 - 1

Schema = dict[str, Any]


@dataclass(frozen=True)
class RuleCost:
    """One rule (or message expression) of a schema and what the apiserver charges for it.

    ``cost`` is the estimate times ``cardinality``, ``None`` with ``reason`` when not
    estimated. ``containers`` are the enclosing lists and maps without a bound (paths like
    ``.spec.volumes``), ``unbounded`` the values without one whose size weighs in the estimate.
    """

    path: str
    index: int
    expression: str
    message_expression: bool
    cost: int | None
    cardinality: int
    containers: tuple[str, ...]
    unbounded: tuple[str, ...]
    reason: str | None = None

    @property
    def where(self) -> str:
        part = "messageExpression" if self.message_expression else "rule"
        return f"{self.path}: x-kubernetes-validations[{self.index}].{part}"


def _max_elements(schema: Schema) -> int | None:
    """What the apiserver multiplies a child's cardinality by (``extractMaxElements``)."""
    if schema.get("type") == "array":
        return int(schema["maxItems"]) if "maxItems" in schema else None
    if schema.get("type") == "object" and "additionalProperties" in schema:
        return int(schema["maxProperties"]) if "maxProperties" in schema else None
    return 1


def rule_costs(schema: Schema) -> list[RuleCost]:
    """Every rule and message expression of an ``openAPIV3Schema``, with its charged cost."""
    found: list[RuleCost] = []
    _walk(schema, ".", True, 1, (), found)
    return found


def _walk(
    node: Schema,
    path: str,
    resource_root: bool,
    cardinality: int | None,
    containers: tuple[str, ...],
    found: list[RuleCost],
) -> None:
    rules = node.get("x-kubernetes-validations") or []
    if rules:
        self_type = decl_type(node, resource_root)
        if self_type is not None:
            _observe(node, path, self_type, cardinality, containers, found)
    factor = _max_elements(node)
    child_cardinality = None
    if cardinality is not None and factor is not None:
        child_cardinality = min(cardinality * factor, _U64)
    inner = containers if factor is not None else (*containers, path)
    for name, child in (node.get("properties") or {}).items():
        if isinstance(child, dict):
            embedded = bool(child.get("x-kubernetes-embedded-resource"))
            child_path = f"{path.rstrip('.')}.{name}"
            _walk(child, child_path, embedded, child_cardinality, inner, found)
    for key in ("items", "additionalProperties"):
        child = node.get(key)
        if isinstance(child, dict):
            embedded = bool(child.get("x-kubernetes-embedded-resource"))
            child_path = f"{path.rstrip('.') or ''}[*]"
            _walk(child, child_path, embedded, child_cardinality, inner, found)


def _observe(
    node: Schema,
    path: str,
    self_type: Decl,
    cardinality: int | None,
    containers: tuple[str, ...],
    found: list[RuleCost],
) -> None:
    # under an unbounded list or map the apiserver takes how many of this value fit a request
    times = max_cardinality(self_type.min_size) if cardinality is None else cardinality
    for index, rule in enumerate(node["x-kubernetes-validations"]):
        if not isinstance(rule, dict):
            continue
        for text, is_message in ((rule.get("rule"), False), (rule.get("messageExpression"), True)):
            if not isinstance(text, str) or not text.strip():
                continue
            # a message expression runs once per failure and is not multiplied
            scale = 1 if is_message else times
            try:
                estimate = estimate_rule(text, self_type, rule.get("optionalOldSelf") is True)
            except NotEstimated as error:
                found.append(
                    RuleCost(path, index, text, is_message, None, scale, containers, (), str(error))
                )
                continue
            cost = min(estimate.cost * scale, _U64)
            found.append(
                RuleCost(path, index, text, is_message, cost, scale, containers, estimate.unbounded)
            )


def _factor(cost: int, limit: int) -> str:
    """The factor as the apiserver words it (``getCostErrorMessage``)."""
    ratio = cost / limit
    if ratio > 100:
        return "more than 100x"
    return f"{ratio:f}x" if ratio < 1.5 else f"{ratio:.1f}x"


def _remedy(rule: RuleCost) -> str:
    steps: list[str] = []
    if rule.containers:
        lists = ", ".join(rule.containers)
        steps.append(f"bound the list/map around it ({lists}) with MaxItems/MaxProperties")
    if rule.unbounded:
        steps.append(
            f"bound what it reads ({', '.join(rule.unbounded)}) with MaxLength/MaxItems/"
            "MaxProperties"
        )
    if not steps:
        steps.append("lower the bounds around it or simplify the rule")
    return "; ".join(steps)


def budget_problems(schema: Schema) -> list[str]:
    """The rules of an ``openAPIV3Schema`` the apiserver refuses for cost, and the total."""
    costs = rule_costs(schema)
    problems: list[str] = []
    for rule in costs:
        if rule.cost is not None and rule.cost > PER_RULE_LIMIT:
            what = "message expression" if rule.message_expression else "rule"
            problems.append(
                f"{rule.where}: CEL {what} {rule.expression!r} has an estimated cost of "
                f"{rule.cost:,} (x{rule.cardinality:,} times it may run), over the apiserver's "
                f"budget of {PER_RULE_LIMIT:,} by {_factor(rule.cost, PER_RULE_LIMIT)}: "
                f"{_remedy(rule)}"
            )
    total = sum(rule.cost for rule in costs if rule.cost is not None)
    if total > PER_CRD_LIMIT:
        dearest = sorted(
            (r for r in costs if r.cost is not None), key=lambda r: r.cost or 0, reverse=True
        )[:4]
        listed = ", ".join(f"{r.where} ({r.cost:,})" for r in dearest)
        problems.append(
            f".: the CEL rules total an estimated cost of {total:,}, over the apiserver's "
            f"budget of {PER_CRD_LIMIT:,} per schema by {_factor(total, PER_CRD_LIMIT)}; the "
            f"dearest: {listed}: bound the lists, maps and strings they run on"
        )
    return problems


def unestimated_rules(schema: Schema) -> list[RuleCost]:
    """The rules whose cost is not estimated offline (``reason`` says why)."""
    return [rule for rule in rule_costs(schema) if rule.cost is None]
