"""The structural checker against the real apiserver: it reports exactly what the apiserver
refuses.

Each case is a schema sent to the apiserver as a dry-run CRD create (validated in full, never
stored): where the apiserver accepts it crdkit must report nothing, where it refuses it crdkit
must report the rule at the right path. The public CRDs under tests/data/crds are installed
for real. A future apiserver that changes a rule shows up here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from crd_api import BlockingApi

from crdkit.crd import schema_violations
from crdkit.testing import ControlPlane, crd_manifest
from crdkit.testing.envtest.crds import crd_is_established, load_crds

pytestmark = pytest.mark.integration

REAL_CRDS = Path(__file__).parents[2] / "data" / "crds"
DRY_RUN_CREATE = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All"
INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]


def root(**spec: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", **spec}}}


def field(**schema: Any) -> dict[str, Any]:
    return root(properties={"a": schema})


def list_map(**items: Any) -> dict[str, Any]:
    keys = {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}
    return field(type="array", items={"type": "object", **items}, **keys)


ACCEPTED: dict[str, dict[str, Any]] = {
    "int_or_string_any_of": field(**{"x-kubernetes-int-or-string": True, "anyOf": INT_OR_STRING}),
    "int_or_string_all_of": field(**{
        "x-kubernetes-int-or-string": True,
        "allOf": [{"anyOf": INT_OR_STRING}, {"pattern": "^[0-9]+$"}],
    }),
    "resource_list": field(type="object", additionalProperties={
        "x-kubernetes-int-or-string": True, "anyOf": INT_OR_STRING, "pattern": "^[0-9]+$",
    }),
    "int_or_string_with_a_type": field(type="string", **{"x-kubernetes-int-or-string": True}),
    "nested_additional_properties_false": field(
        type="object", anyOf=[{"additionalProperties": False}]
    ),
    "unique_items_false": field(type="array", uniqueItems=False, items={"type": "string"}),
    "properties_beside_additional_true": field(
        type="object", properties={"b": {"type": "string"}}, additionalProperties=True
    ),
    "set_of_plain_lists": field(type="array", **{"x-kubernetes-list-type": "set"},
                                items={"type": "array", "items": {"type": "string"}}),
    "map_list_key_required": list_map(properties={"k": {"type": "string"}}, required=["k"]),
    "map_list_key_int_or_string": list_map(
        properties={"k": {"x-kubernetes-int-or-string": True}}, required=["k"]
    ),
    "re2_inline_flags": field(type="string", pattern="^(?i)[a-z]+\\z", default="Abc"),
    "int_or_string_zero_values": field(**{
        "x-kubernetes-int-or-string": True,
        "anyOf": [{"type": "integer", "nullable": False}, {"type": "string", "description": ""}],
    }),
    "metadata_zero_values": {"type": "object", "properties": {"metadata": {
        "type": "object", "description": "", "properties": {},
    }}},
    "completeness_below_the_root": root(anyOf=[{"properties": {"ghost": {"minimum": 1}}}]),
    "required_names_an_undeclared_field": field(type="object", required=["x"]),
    "enum_value_of_another_type": field(type="string", enum=[1]),
    "exclusive_minimum_alone": field(type="integer", exclusiveMinimum=True),
    "properties_on_a_string": field(type="string", properties={"b": {"type": "string"}}),
    "metadata_name_restricted": {"type": "object", "properties": {"metadata": {
        "type": "object", "properties": {"name": {"type": "string", "maxLength": 10}},
    }}},
    "junctor_rules_on_a_declared_field": {
        "type": "object", "properties": {"a": {"type": "integer"}},
        "oneOf": [{"properties": {"a": {"minimum": 1}}, "required": ["a"]}, {"not": {}}],
    },
    "field_paths_through_properties_and_maps": root(
        properties={"a": {"type": "object", "additionalProperties": {
            "type": "object", "properties": {"z": {"type": "string"}}}}},
        **{"x-kubernetes-validations": [
            {"rule": "true", "fieldPath": ".a['k.x'].z"},
            {"rule": "true", "fieldPath": "['a'].k"},
            {"rule": "true", "fieldPath": ".a['it\\'s']"},
        ]},
    ),
    "root_default_with_type_meta": {
        "type": "object", "default": {"apiVersion": "structural.crdkit.dev/v1", "kind": "Probe"},
        "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"}},
    },
    "date_time_default_in_nanoseconds": field(
        type="string", format="date-time", default="2024-01-02T03:04:05.123456789Z"
    ),
    "optional_old_self_used": root(**{"x-kubernetes-validations": [
        {"rule": "!oldSelf.hasValue() || self == oldSelf.value()", "optionalOldSelf": True},
    ]}),
}  # fmt: skip

# case -> (crdkit's report, starting with the path; a fragment of the apiserver's refusal)
REFUSED: dict[str, tuple[dict[str, Any], str, str]] = {
    "any_of_nested_in_all_of": (
        field(type="string", allOf=[{"anyOf": [{"type": "boolean"}, {"type": "string"}]}]),
        ".spec.a(allOf[0])(anyOf[0]): type must be empty",
        "allOf[0].anyOf[0].type: Forbidden: must be empty to be structural",
    ),
    "default_nested_in_not_any_of": (
        field(type="string", **{"not": {"anyOf": [{"default": "x"}]}}),
        ".spec.a(not)(anyOf[0]): default must be undefined",
        "not.anyOf[0].default: Forbidden: must be undefined to be structural",
    ),
    "title_nested_in_a_property": (
        field(type="object", properties={"b": {"type": "string"}},
              oneOf=[{"properties": {"b": {"allOf": [{"title": "t"}]}}}]),
        ".spec.a(oneOf[0]).b(allOf[0]): title must be empty",
        "title: Forbidden: must be empty to be structural",
    ),
    "nullable_nested_in_items": (
        field(type="array", items={"type": "string"},
              anyOf=[{"items": {"not": {"nullable": True}}}]),
        ".spec.a(anyOf[0])[*](not): nullable must be false",
        "nullable: Forbidden: must be false to be structural",
    ),
    "almost_int_or_string": (
        field(**{"x-kubernetes-int-or-string": True,
                 "anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 3}]}),
        ".spec.a(anyOf[1]): type must be empty",
        "anyOf[1].type: Forbidden: must be empty to be structural",
    ),
    "int_or_string_in_a_junctor": (
        field(type="string", anyOf=[{"x-kubernetes-int-or-string": True}]),
        ".spec.a(anyOf[0]): x-kubernetes-int-or-string must be false",
        "x-kubernetes-int-or-string: Forbidden: must be false to be structural",
    ),
    "preserve_in_a_junctor": (
        field(type="object", allOf=[{"x-kubernetes-preserve-unknown-fields": True}]),
        ".spec.a(allOf[0]): x-kubernetes-preserve-unknown-fields must be false",
        "x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural",
    ),
    "list_type_in_a_junctor": (
        field(type="array", items={"type": "string"},
              allOf=[{"x-kubernetes-list-type": "atomic"}]),
        ".spec.a(allOf[0]): x-kubernetes-list-type must be undefined",
        "x-kubernetes-list-type: Forbidden: must be undefined to be structural",
    ),
    "rules_in_a_junctor": (
        field(type="string", anyOf=[{"x-kubernetes-validations": [{"rule": "true"}]}]),
        ".spec.a(anyOf[0]): x-kubernetes-validations must be empty",
        "x-kubernetes-validations: Forbidden: must be empty to be structural",
    ),
    "additional_properties_schema_in_a_junctor": (
        field(type="object", anyOf=[{"additionalProperties": {"type": "string"}}]),
        ".spec.a(anyOf[0]): additionalProperties must be undefined",
        "additionalProperties: Forbidden: must be undefined to be structural",
    ),
    "metadata_in_a_junctor": (
        {"type": "object", "properties": {"metadata": {"type": "object"}},
         "anyOf": [{"properties": {"metadata": {"required": ["name"]}}}]},
        ".(anyOf[0]).metadata: must not be specified inside",
        "must not be specified in a nested context",
    ),
    "completeness_at_the_root": (
        {"type": "object", "anyOf": [{"properties": {"ghost": {"minimum": 1}}}]},
        ".ghost: must be specified because (anyOf[0]).ghost constrains it",
        "Required value: because it is defined in",
    ),
    "field_without_type": (
        field(description="x"), ".spec.a: type must be set for object fields",
        "must not be empty for specified object fields",
    ),
    "items_without_type": (
        field(type="array", items={"description": "x"}), ".spec.a[*]: type must be set for array",
        "must not be empty for specified array items",
    ),
    "array_without_items": (field(type="array"), ".spec.a: an array must have items",
                            "items: Required value"),
    "additional_properties_at_the_root": (
        {"type": "object", "additionalProperties": {"type": "string"}},
        ".: additionalProperties must not be used at the root", "must not be used at the root",
    ),
    "embedded_string": (
        field(type="string", **{"x-kubernetes-embedded-resource": True}),
        ".spec.a: an embedded resource must have type object",
        "must be object if x-kubernetes-embedded-resource is true",
    ),
    "embedded_without_properties": (
        field(type="object", **{"x-kubernetes-embedded-resource": True}),
        ".spec.a: an embedded resource needs properties",
        "must not be empty if x-kubernetes-embedded-resource is true",
    ),
    "embedded_with_additional_properties": (
        field(type="object", additionalProperties={"type": "string"},
              **{"x-kubernetes-embedded-resource": True,
                 "x-kubernetes-preserve-unknown-fields": True}),
        ".spec.a: additionalProperties must not be used in an embedded resource",
        "must not be used if x-kubernetes-embedded-resource is set",
    ),
    "kind_not_a_string": (
        {"type": "object", "properties": {"kind": {"type": "integer"}}},
        ".kind: must have type string", "must be string",
    ),
    "metadata_labels": (
        {"type": "object", "properties": {"metadata": {
            "type": "object", "properties": {"labels": {"type": "object"}}}}},
        ".metadata: must not specify anything other",
        "must not specify anything other than name and generateName",
    ),
    "metadata_description": (
        {"type": "object", "properties": {"metadata": {"type": "object", "description": "x"}}},
        ".metadata: must not specify anything other",
        "must not specify anything other than name and generateName",
    ),
    "int_or_string_preserving": (
        field(**{"x-kubernetes-int-or-string": True,
                 "x-kubernetes-preserve-unknown-fields": True}),
        ".spec.a: x-kubernetes-preserve-unknown-fields must be false if",
        "must be false if x-kubernetes-int-or-string is true",
    ),
    "back_reference": (
        field(type="string", pattern="(a)\\1"), ".spec.a: pattern",
        "must be a valid regular expression",
    ),
    "unique_items": (
        field(type="array", uniqueItems=True, items={"type": "string"}),
        ".spec.a: uniqueItems is not allowed", "uniqueItems cannot be set to true",
    ),
    "ref": (field(type="string", **{"$ref": "#/x"}), ".spec.a: $ref is not allowed",
            "$ref is not supported"),
    "type_null": (field(type="null"), ".spec.a: type cannot be null",
                  "type cannot be set to null"),
    "nullable_root": (
        {"type": "object", "nullable": True},
        ".: nullable cannot be true at the root", "nullable cannot be true at the root",
    ),
    "preserve_false": (
        field(type="string", **{"x-kubernetes-preserve-unknown-fields": False}),
        ".spec.a: x-kubernetes-preserve-unknown-fields must be true or undefined",
        "x-kubernetes-preserve-unknown-fields",
    ),
    "map_type_on_a_string": (
        field(type="string", **{"x-kubernetes-map-type": "atomic"}),
        ".spec.a: x-kubernetes-map-type needs type object",
        "must be object if x-kubernetes-map-type is specified",
    ),
    "list_type_on_an_object": (
        field(type="object", **{"x-kubernetes-list-type": "atomic"}),
        ".spec.a: x-kubernetes-list-type needs type array",
        "must be array if x-kubernetes-list-type is specified",
    ),
    "set_of_granular_maps": (
        field(type="array", items={"type": "object", "properties": {}},
              **{"x-kubernetes-list-type": "set"}),
        ".spec.a[*]: items of a set must be atomic maps",
        "must be atomic as item of a list with x-kubernetes-list-type=set",
    ),
    "map_list_optional_key": (
        list_map(properties={"k": {"type": "string"}}),
        ".spec.a: list map key 'k' must be required or defaulted", "must have a default",
    ),
    "map_list_object_key": (
        list_map(properties={"k": {"type": "object"}}, required=["k"]),
        ".spec.a: list map key 'k' must be a scalar", "must be a scalar type",
    ),
    "map_list_key_not_a_property": (
        list_map(properties={"j": {"type": "string"}}),
        ".spec.a: list map key 'k' is not a property", "entries must all be names of item",
    ),
    "map_list_without_keys": (
        field(type="array", items={"type": "object"}, **{"x-kubernetes-list-type": "map"}),
        ".spec.a: a map list needs x-kubernetes-list-map-keys",
        "must not be empty if x-kubernetes-list-type is map",
    ),
    "blank_rule": (
        root(**{"x-kubernetes-validations": [{"rule": " "}]}),
        ".spec: x-kubernetes-validations[0]: rule must be a non-empty", "rule is not specified",
    ),
    "unknown_reason": (
        root(**{"x-kubernetes-validations": [{"rule": "true", "reason": "Nope"}]}),
        ".spec: x-kubernetes-validations[0]: reason must be one of", "Unsupported value",
    ),
    "multi_line_rule_without_message": (
        root(**{"x-kubernetes-validations": [{"rule": "true ||\nfalse"}]}),
        ".spec: x-kubernetes-validations[0]: a rule with line breaks needs a message",
        "message must be specified if rule contains line breaks",
    ),
    "field_path_to_an_undeclared_field": (
        root(properties={"a": {"type": "string"}},
             **{"x-kubernetes-validations": [{"rule": "true", "fieldPath": ".a.b"}]}),
        ".spec: x-kubernetes-validations[0]: fieldPath '.a.b' does not refer to a valid field",
        "must be a valid path",
    ),
    "field_path_without_a_leading_step": (
        root(properties={"a": {"type": "string"}},
             **{"x-kubernetes-validations": [{"rule": "true", "fieldPath": "a"}]}),
        ".spec: x-kubernetes-validations[0]: fieldPath 'a' must step with",
        "must be a valid path",
    ),
    "field_path_with_a_bad_escape": (
        root(properties={"a": {"type": "object", "additionalProperties": {"type": "string"}}},
             **{"x-kubernetes-validations": [{"rule": "true", "fieldPath": ".a['\\q']"}]}),
        ".spec: x-kubernetes-validations[0]: fieldPath \".a['\\\\q']\" has an invalid escape",
        "must be a valid path",
    ),
    "default_of_the_wrong_format": (
        field(type="string", format="date-time", default="nope"),
        ".spec.a: default is invalid: .spec.a: 'nope' is not of format date-time",
        "must be of type date-time",
    ),
    "root_default_without_type_meta": (
        {"type": "object", "default": {}},
        ".: default is invalid: .: an embedded resource needs apiVersion and kind",
        "default.apiVersion: Required value",
    ),
    "optional_old_self_unused": (
        root(**{"x-kubernetes-validations": [{"rule": "true", "optionalOldSelf": True}]}),
        ".spec: x-kubernetes-validations[0]: optionalOldSelf may only be set if",
        "may not be set if oldSelf is not used in rule",
    ),
    "default_of_another_type": (field(type="integer", default="x"),
                                ".spec.a: default is invalid", "default"),
    "default_with_a_pruned_field": (
        field(type="object", properties={"b": {"type": "string"}}, default={"c": "x"}),
        ".spec.a: default is invalid", "must not have unknown fields",
    ),
    "default_below_the_minimum": (field(type="integer", minimum=3, default=1),
                                  ".spec.a: default is invalid", "greater than or equal to 3"),
    "default_in_top_level_api_version": (
        {"type": "object", "properties": {"apiVersion": {"type": "string", "default": "v"}}},
        ".apiVersion: default must not be set", "must not be set in top-level apiVersion",
    ),
    "properties_beside_additional_schema": (
        field(type="object", properties={"b": {"type": "string"}},
              additionalProperties={"type": "string"}),
        ".spec.a: properties and additionalProperties are mutually exclusive",
        "additionalProperties and properties are mutual exclusive",
    ),
    "properties_beside_additional_false": (
        field(type="object", properties={"b": {"type": "string"}}, additionalProperties=False),
        ".spec.a: properties and additionalProperties are mutually exclusive",
        "additionalProperties and properties are mutual exclusive",
    ),
}  # fmt: skip


def crd(schema: dict[str, Any]) -> dict[str, Any]:
    return crd_manifest("structural.crdkit.dev", "Probe", schema)


@pytest.fixture(scope="module")
def raw_api(control_plane: ControlPlane) -> BlockingApi:
    return BlockingApi(control_plane)


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_what_the_apiserver_accepts_crdkit_does_not_report(raw_api: BlockingApi, name: str) -> None:
    schema = ACCEPTED[name]
    status, body = raw_api.request("POST", DRY_RUN_CREATE, crd(schema))
    assert status == 201, body.get("message")
    assert schema_violations(schema) == []


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_the_apiserver_refuses_crdkit_reports_at_its_path(
    raw_api: BlockingApi, name: str
) -> None:
    schema, report, refusal = REFUSED[name]
    status, body = raw_api.request("POST", DRY_RUN_CREATE, crd(schema))
    assert status == 422, body
    assert refusal in body["message"], body["message"]
    violations = schema_violations(schema)
    assert any(v.startswith(report) for v in violations), violations


def test_with_status_the_root_may_not_constrain_it(raw_api: BlockingApi) -> None:
    schema = {"type": "object", "properties": {"status": {"type": "object"}},
              "anyOf": [{"required": ["status"]}]}  # fmt: skip
    with_status = crd(schema)
    with_status["spec"]["versions"][0]["subresources"] = {"status": {}}
    status, body = raw_api.request("POST", DRY_RUN_CREATE, with_status)
    assert status == 422, body
    assert "if the status subresource is enabled" in body["message"]
    assert schema_violations(schema, status_subresource=True) == [
        ".: with the status subresource the root may not have ['anyOf'] (only "
        "['description', 'example', 'exclusiveMaximum', 'exclusiveMinimum', 'externalDocs', "
        "'format', 'items', 'maxItems', 'maxLength', 'maximum', 'minItems', 'minLength', "
        "'minimum', 'multipleOf', 'pattern', 'properties', 'required', 'title', 'type', "
        "'uniqueItems', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-validations'])"
    ]
    status, body = raw_api.request("POST", DRY_RUN_CREATE, crd(schema))
    assert status == 201, body.get("message")
    assert schema_violations(schema) == []


def test_an_unknown_keyword_is_refused_under_strict_field_validation(raw_api: BlockingApi) -> None:
    # kubectl asks for strict validation; without it the apiserver drops the keyword silently
    schema = field(type="string", const="x")
    status, body = raw_api.request("POST", DRY_RUN_CREATE + "&fieldValidation=Strict", crd(schema))
    assert status == 400, body
    assert 'unknown field "spec.versions[0].schema.openAPIV3Schema' in body["message"]
    assert schema_violations(schema) == [".spec.a: const is not allowed (use enum)"]


async def test_the_real_crds_install_and_crdkit_reports_nothing() -> None:
    crds = load_crds([REAL_CRDS])
    assert len(crds) == len(list(REAL_CRDS.glob("*.yaml")))
    for each in crds:
        for version in each["spec"]["versions"]:
            schema = version["schema"]["openAPIV3Schema"]
            assert schema_violations(schema) == [], (each["metadata"]["name"], version["name"])
    # A control plane of its own: these CRDs (Volcano's Job among them) must not replace the
    # ones other tests install under the same names on the shared one.
    async with ControlPlane() as plane:
        stored = await plane.install_crds(crds)
    assert all(crd_is_established(each) for each in stored)
