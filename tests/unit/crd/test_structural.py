from typing import Any

import pytest

from crdkit.crd import schema_violations
from crdkit.crd.structural import value_problem


def root(**spec: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", **spec}}}


def test_a_good_schema_has_no_violations() -> None:
    assert schema_violations(root(properties={"a": {"type": "integer", "default": 1}})) == []


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"properties": {}}, ".: the root must have type object"),
        (root(properties={"a": {}}), ".spec.a: type must be set"),
        (root(properties={"a": {"$ref": "#/x", "type": "string"}}), ".spec.a: $ref is not allowed"),
        (root(properties={"a": {"type": "string"}}, additionalProperties={"type": "string"}),
         "mutually exclusive"),
        (root(properties={"a": {"type": "array", "uniqueItems": True,
                                "items": {"type": "string"}}}),
         "uniqueItems is not allowed"),
        (root(properties={"a": {"type": "array"}}), ".spec.a: an array must have items"),
        (root(properties={"a": {"type": "string", "x-kubernetes-int-or-string": True}}),
         "must not have a type"),
        (root(anyOf=[{"type": "object"}]), "type is not allowed inside allOf/anyOf/oneOf/not"),
        (root(properties={"a": {"type": "integer", "default": "x"}}),
         ".spec.a: default is invalid"),
        (root(properties={"a": {"type": "object", "properties": {"b": {"type": "string"}},
                                "default": {"c": "x"}}}), "it would be pruned"),
        (root(properties={"a": {"type": "integer", "minimum": 3, "default": 1}}),
         "below the minimum"),
        (root(properties={"a": {"type": "string", "default": None}}), "null default"),
        (root(properties={"a": {"type": "array", "x-kubernetes-list-type": "map",
                                "x-kubernetes-list-map-keys": ["k"],
                                "items": {"type": "object",
                                          "properties": {"k": {"type": "string"}}}}}),
         "list map key 'k' must be required or defaulted"),
        (root(properties={"a": {"type": "array", "x-kubernetes-list-type": "set",
                                "items": {"type": "object", "properties": {}}}}),
         "items of a set must be scalars or atomic"),
        (root(properties={"a": {"type": "string", "x-kubernetes-map-type": "atomic"}}),
         "x-kubernetes-map-type needs type object"),
        (root(properties={"a": {"type": "string", "pattern": "(a)\\1"}}), "back-references"),
        (root(properties={"a": {"type": "string", "enum": [1]}}), "enum value 1 is not of type"),
        (root(properties={"a": {"type": "string", "x-kubernetes-embedded-resource": True}}),
         "an embedded resource must have type object"),
        (root(**{"x-kubernetes-validations": [{"rule": " "}]}), "rule must be a non-empty"),
        (root(**{"x-kubernetes-validations": [{"rule": "true", "reason": "Nope"}]}),
         "reason must be one of"),
        ({"type": "object", "properties": {"metadata": {"type": "object", "properties": {
            "labels": {"type": "object"}}}}}, ".metadata.labels: only name and generateName"),
        (root(properties={"a": {"type": "integer", "exclusiveMinimum": 3}}),
         "exclusiveMinimum must be a boolean beside minimum"),
    ],
)  # fmt: skip
def test_violations_name_the_path(schema: dict[str, Any], message: str) -> None:
    violations = schema_violations(schema)
    assert any(message in v for v in violations), violations


def test_value_problem_checks_nested_values() -> None:
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "integer", "maximum": 2}}},
        "required": ["items"],
    }
    assert value_problem({"items": [1, 2]}, schema) is None
    assert value_problem({"items": [3]}, schema) == ".items[0]: 3 is above the maximum 2"
    assert value_problem({}, schema) == ".: required field 'items' is missing"
