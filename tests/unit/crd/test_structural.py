from pathlib import Path
from typing import Any

import pytest
import yaml

from crdkit.crd import schema_violations
from crdkit.crd.structural import value_problem

REAL_CRDS = Path(__file__).parents[2] / "data" / "crds"


def root(**spec: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", **spec}}}


def field(**schema: Any) -> dict[str, Any]:
    return root(properties={"a": schema})


INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]


def real_schemas() -> list[tuple[str, dict[str, Any]]]:
    """Every version's schema in the public CRDs under tests/data/crds."""
    found = []
    for path in sorted(REAL_CRDS.glob("*.yaml")):
        for crd in yaml.safe_load_all(path.read_text()):
            for version in crd["spec"]["versions"]:
                found.append(
                    (f"{path.stem} {version['name']}", version["schema"]["openAPIV3Schema"])
                )
    return found


def test_a_good_schema_has_no_violations() -> None:
    assert schema_violations(root(properties={"a": {"type": "integer", "default": 1}})) == []


def test_the_real_crds_have_no_violations() -> None:
    schemas = real_schemas()
    assert len(schemas) >= 15
    assert {name: schema_violations(schema) for name, schema in schemas} == {
        name: [] for name, _ in schemas
    }


# -- regressions of issue 11: the checker flagged what the apiserver accepts ----------------------


@pytest.mark.parametrize(
    "schema",
    [
        field(**{"x-kubernetes-int-or-string": True, "anyOf": INT_OR_STRING}),
        field(**{"x-kubernetes-int-or-string": True, "pattern": "^[0-9]+%?$",
                 "allOf": [{"anyOf": INT_OR_STRING}, {"pattern": "^[0-9]+$"}]}),
        # a resource list, as every pod template has
        field(type="object", additionalProperties={
            "x-kubernetes-int-or-string": True, "anyOf": INT_OR_STRING}),
        field(type="object", anyOf=[{"additionalProperties": False}]),
        field(type="array", uniqueItems=False, items={"type": "string"}),
        field(type="object", properties={"b": {"type": "string"}}, additionalProperties=True),
        field(type="array", **{"x-kubernetes-list-type": "set"},
              items={"type": "array", "items": {"type": "string"}}),
        field(type="string", pattern="^(?i)[a-z]+$", default="Abc"),
        # zero values count as unset, as in the apiserver's comparison
        field(**{"x-kubernetes-int-or-string": True,
                 "anyOf": [{"type": "integer", "nullable": False}, {"type": "string"}]}),
        {"type": "object", "properties": {"metadata": {"type": "object", "description": "",
                                                       "properties": {}}}},
    ],
)  # fmt: skip
def test_what_the_apiserver_accepts_is_not_reported(schema: dict[str, Any]) -> None:
    assert schema_violations(schema) == []


# -- regressions of issue 11: junctors nested in junctors were not walked ------------------------


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (field(type="string", allOf=[{"anyOf": [{"type": "boolean"}, {"type": "string"}]}]),
         ".spec.a(allOf[0])(anyOf[0]): type must be empty inside allOf/anyOf/oneOf/not"),
        (field(type="string", **{"not": {"anyOf": [{"default": "x"}]}}),
         ".spec.a(not)(anyOf[0]): default must be undefined inside allOf/anyOf/oneOf/not"),
        (field(type="object", oneOf=[{"properties": {"b": {"allOf": [{"title": "t"}]}}}]),
         ".spec.a(oneOf[0]).b(allOf[0]): title must be empty"),
        (field(type="array", items={"type": "string"},
               anyOf=[{"items": {"not": {"nullable": True}}}]),
         ".spec.a(anyOf[0])[*](not): nullable must be false"),
    ],
)  # fmt: skip
def test_nested_junctors_are_walked(schema: dict[str, Any], message: str) -> None:
    violations = schema_violations(schema)
    assert any(v.startswith(message) for v in violations), violations


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"properties": {}}, ".: type must be set at the root"),
        ({"type": "array", "items": {"type": "string"}}, ".: the root must have type object"),
        (field(), ".spec.a: type must be set for object fields"),
        (field(type="array", items={}), ".spec.a[*]: type must be set for array items"),
        (field(**{"$ref": "#/x", "type": "string"}), ".spec.a: $ref is not allowed"),
        (field(type="object", properties={"b": {"type": "string"}},
               additionalProperties={"type": "string"}), "mutually exclusive"),
        (field(type="array", uniqueItems=True, items={"type": "string"}),
         "uniqueItems is not allowed"),
        (field(type="array"), ".spec.a: an array must have items"),
        (root(anyOf=[{"type": "object"}]),
         ".spec(anyOf[0]): type must be empty inside allOf/anyOf/oneOf/not"),
        (field(**{"x-kubernetes-int-or-string": True,
                  "anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 3}]}),
         ".spec.a(anyOf[1]): type must be empty"),
        (field(type="string", anyOf=[{"x-kubernetes-int-or-string": True}]),
         "x-kubernetes-int-or-string must be false"),
        (field(type="object", anyOf=[{"additionalProperties": {"type": "string"}}]),
         ".spec.a(anyOf[0]): additionalProperties must be undefined"),
        ({"type": "object", "anyOf": [{"properties": {"metadata": {"required": ["name"]}}}],
          "properties": {"metadata": {"type": "object"}}},
         ".(anyOf[0]).metadata: must not be specified inside"),
        ({"type": "object", "anyOf": [{"properties": {"ghost": {"minimum": 1}}}]},
         ".ghost: must be specified because (anyOf[0]).ghost constrains it"),
        ({"type": "object", "additionalProperties": {"type": "string"}},
         ".: additionalProperties must not be used at the root"),
        (field(type="integer", default="x"), ".spec.a: default is invalid"),
        (field(type="object", properties={"b": {"type": "string"}}, default={"c": "x"}),
         "it would be pruned"),
        (field(type="integer", minimum=3, default=1), "below the minimum"),
        (field(type="string", default=None), "null default"),
        (field(type="array", items={"type": "object", "properties": {"k": {"type": "string"}}},
               **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}),
         "list map key 'k' must be required or defaulted"),
        (field(type="array", items={"type": "object", "properties": {}},
               **{"x-kubernetes-list-type": "set"}), ".spec.a[*]: items of a set must be atomic"),
        (field(type="string", **{"x-kubernetes-map-type": "atomic"}),
         "x-kubernetes-map-type needs type object"),
        (field(type="string", pattern="(a)\\1"), "back-references"),
        (field(type="string", **{"x-kubernetes-embedded-resource": True}),
         "an embedded resource must have type object"),
        (field(type="object", **{"x-kubernetes-embedded-resource": True}),
         "an embedded resource needs properties"),
        (field(**{"x-kubernetes-int-or-string": True,
                  "x-kubernetes-preserve-unknown-fields": True}),
         "x-kubernetes-preserve-unknown-fields must be false if x-kubernetes-int-or-string"),
        (field(type="string", **{"x-kubernetes-preserve-unknown-fields": False}),
         "must be true or undefined"),
        (root(**{"x-kubernetes-validations": [{"rule": " "}]}), "rule must be a non-empty"),
        (root(**{"x-kubernetes-validations": [{"rule": "true", "reason": "Nope"}]}),
         "reason must be one of"),
        (root(**{"x-kubernetes-validations": [{"rule": "true ||\nfalse"}]}),
         "a rule with line breaks needs a message"),
        ({"type": "object", "properties": {"metadata": {"type": "object", "properties": {
            "labels": {"type": "object"}}}}}, ".metadata: must not specify anything other"),
        ({"type": "object", "properties": {"kind": {"type": "integer"}}},
         ".kind: must have type string"),
        ({"type": "object", "properties": {"apiVersion": {"type": "string", "default": "v"}}},
         ".apiVersion: default must not be set in top-level apiVersion"),
        ({"type": "object", "nullable": True}, ".: nullable cannot be true at the root"),
        (field(type="null"), ".spec.a: type cannot be null"),
    ],
)  # fmt: skip
def test_violations_name_the_path(schema: dict[str, Any], message: str) -> None:
    violations = schema_violations(schema)
    assert any(message in v for v in violations), violations


def test_with_status_the_root_may_only_hold_what_survives_the_split() -> None:
    schema = {"type": "object", "anyOf": [{"required": ["status"]}], "nullable": False,
              "properties": {"status": {"type": "object"}}}  # fmt: skip
    assert schema_violations(schema) == []
    # nullable: false is Go's zero value, which the apiserver does not count as set
    [violation] = schema_violations(schema, status_subresource=True)
    assert violation.startswith(".: with the status subresource the root may not have ['anyOf']")


@pytest.mark.parametrize(
    ("field_path", "problem"),
    [
        (".a", None),
        (".a.anyKey.z", None),
        (".a['k.x'].z", None),
        ("['a']['it\\'s']", None),
        (".a.k.y", "does not refer to a valid field"),
        (".b.c", "does not refer to a valid field"),
        (".ghost", "does not refer to a valid field"),
        ("a", "must step with . or ["),
        (".a.", "ends unexpectedly"),
        (".a[k]", "must quote the name"),
        (".a['k'", "must close [ with ]"),
        (".a['\\q']", "has an invalid escape"),
    ],
)
def test_a_rules_field_path_must_name_a_field(field_path: str, problem: str | None) -> None:
    schema = root(
        properties={
            "a": {"type": "object", "additionalProperties": {
                "type": "object", "properties": {"z": {"type": "string"}}}},
            "b": {"type": "string"},
        },
        **{"x-kubernetes-validations": [{"rule": "true", "fieldPath": field_path}]},
    )  # fmt: skip
    violations = schema_violations(schema)
    if problem is None:
        assert violations == []
    else:
        [violation] = violations
        assert violation.startswith(f".spec: x-kubernetes-validations[0]: fieldPath {field_path!r}")
        assert problem in violation


def test_completeness_is_only_checked_for_the_roots_junctors() -> None:
    # as in the apiserver: a junctor below the root may constrain an undeclared field
    assert schema_violations(root(anyOf=[{"properties": {"ghost": {"minimum": 1}}}])) == []


def test_value_problem_checks_nested_values() -> None:
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "integer", "maximum": 2}}},
        "required": ["items"],
    }
    assert value_problem({"items": [1, 2]}, schema) is None
    assert value_problem({"items": [3]}, schema) == ".items[0]: 3 is above the maximum 2"
    assert value_problem({}, schema) == ".: required field 'items' is missing"
