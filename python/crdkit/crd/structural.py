"""An offline check that a CRD schema is *structural*, as the apiserver requires.

It mirrors the rules of ``apiextensions.k8s.io/v1`` (structural schema, defaulting, list and
map types), so a bad schema is reported at generation time with the path of every offending
node instead of as one opaque 422 at install time. ``crd_schema`` output always passes; the
checker also guards hand-edited schemas and the converter itself.
"""

from __future__ import annotations

import math
import re
from typing import Any

from crdkit.crd.re2 import re2_problem

__all__ = ["schema_violations", "value_problem"]

Schema = dict[str, Any]

_ALLOWED = frozenset(
    {
        "type", "format", "description", "default", "enum", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
        "pattern", "minItems", "maxItems", "minProperties", "maxProperties", "nullable",
        "properties", "required", "items", "additionalProperties", "allOf", "anyOf", "oneOf",
        "not", "title", "example", "externalDocs",
        "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
        "x-kubernetes-map-type", "x-kubernetes-validations",
    }
)  # fmt: skip
_FORBIDDEN = {
    "$ref": "$ref is not allowed; every schema must be inline",
    "definitions": "definitions are not allowed",
    "$defs": "$defs are not allowed",
    "dependencies": "dependencies are not allowed",
    "additionalItems": "additionalItems is not allowed",
    "patternProperties": "patternProperties is not allowed",
    "id": "id is not allowed",
    "$schema": "$schema is not allowed",
    "uniqueItems": "uniqueItems is not allowed (use x-kubernetes-list-type: set)",
    "const": "const is not allowed (use enum)",
}
_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean"})
_IN_JUNCTOR_FORBIDDEN = (
    "type",
    "default",
    "description",
    "nullable",
    "additionalProperties",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
)
_REASONS = frozenset(
    {"FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"}
)


def schema_violations(schema: Schema) -> list[str]:
    """Every structural-rule violation in an ``openAPIV3Schema``, each as ``<path>: <rule>``."""
    problems: list[str] = []
    if schema.get("type") != "object":
        problems.append(".: the root must have type object")
    _check_node(schema, ".", problems, root=True)
    metadata = schema.get("properties", {}).get("metadata")
    if metadata is not None:
        _check_metadata(metadata, problems)
    return problems


def _check_node(node: Any, path: str, problems: list[str], *, root: bool = False) -> None:
    if not isinstance(node, dict):
        problems.append(f"{path}: a schema must be an object")
        return
    for key in node:
        if key in _FORBIDDEN:
            problems.append(f"{path}: {_FORBIDDEN[key]}")
        elif key not in _ALLOWED:
            problems.append(f"{path}: unknown keyword {key!r}")
    kind = node.get("type")
    int_or_string = node.get("x-kubernetes-int-or-string") is True
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    if kind is None and not (int_or_string or preserve):
        problems.append(f"{path}: type must be set")
    if kind is not None and kind not in _TYPES:
        problems.append(f"{path}: unknown type {kind!r}")
    if int_or_string and kind is not None:
        problems.append(f"{path}: x-kubernetes-int-or-string must not have a type")
    if "properties" in node and "additionalProperties" in node:
        problems.append(f"{path}: properties and additionalProperties are mutually exclusive")
    if "additionalProperties" in node and preserve:
        problems.append(
            f"{path}: additionalProperties and x-kubernetes-preserve-unknown-fields "
            "are mutually exclusive"
        )
    if node.get("additionalProperties") is False:
        problems.append(f"{path}: additionalProperties must not be false")
    if ("properties" in node or "additionalProperties" in node) and kind != "object":
        problems.append(f"{path}: properties need type object")
    if "items" in node and kind != "array":
        problems.append(f"{path}: items need type array")
    if kind == "array" and "items" not in node:
        problems.append(f"{path}: an array must have items")
    if node.get("x-kubernetes-embedded-resource"):
        if kind != "object":
            problems.append(f"{path}: an embedded resource must have type object")
        if "properties" not in node and not preserve:
            problems.append(
                f"{path}: an embedded resource needs properties or "
                "x-kubernetes-preserve-unknown-fields"
            )
    _check_values(node, path, problems)
    _check_list_and_map_types(node, path, problems)
    _check_rules(node, path, problems)
    if "default" in node:
        if root:
            problems.append(f"{path}: the root must not have a default")
        elif node["default"] is None and not node.get("nullable"):
            problems.append(f"{path}: a null default needs nullable: true")
        elif node["default"] is not None:
            problem = value_problem(node["default"], node, path)
            if problem is not None:
                problems.append(f"{path}: default is invalid: {problem}")
    for name, child in node.get("properties", {}).items():
        _check_node(child, f"{path.rstrip('.')}.{name}", problems)
    if isinstance(node.get("additionalProperties"), dict):
        _check_node(node["additionalProperties"], f"{path.rstrip('.')}[*]", problems)
    if "items" in node:
        _check_node(node["items"], f"{path.rstrip('.')}[*]", problems)
    for junctor in ("allOf", "anyOf", "oneOf"):
        for index, child in enumerate(node.get(junctor, [])):
            _check_junctor(child, f"{path}({junctor}[{index}])", problems)
    if "not" in node:
        _check_junctor(node["not"], f"{path}(not)", problems)


def _check_junctor(node: Any, path: str, problems: list[str]) -> None:
    """Inside allOf/anyOf/oneOf/not only value validations are allowed."""
    if not isinstance(node, dict):
        problems.append(f"{path}: a schema must be an object")
        return
    for key in _IN_JUNCTOR_FORBIDDEN:
        if key in node:
            problems.append(f"{path}: {key} is not allowed inside allOf/anyOf/oneOf/not")
    for child in node.get("properties", {}).values():
        _check_junctor(child, path, problems)
    if isinstance(node.get("items"), dict):
        _check_junctor(node["items"], path, problems)


def _check_values(node: Schema, path: str, problems: list[str]) -> None:
    pattern = node.get("pattern")
    if pattern is not None:
        problem = re2_problem(pattern)
        if problem is not None:
            problems.append(f"{path}: {problem}")
    kind = node.get("type")
    for key, kinds in (
        ("minimum", ("integer", "number")),
        ("maximum", ("integer", "number")),
        ("multipleOf", ("integer", "number")),
        ("minLength", ("string",)),
        ("maxLength", ("string",)),
        ("pattern", ("string",)),
        ("minItems", ("array",)),
        ("maxItems", ("array",)),
        ("minProperties", ("object",)),
        ("maxProperties", ("object",)),
    ):
        if key in node and kind is not None and kind not in kinds:
            problems.append(f"{path}: {key} does not apply to type {kind}")
    for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if flag in node and (not isinstance(node[flag], bool) or bound not in node):
            problems.append(f"{path}: {flag} must be a boolean beside {bound}")
    if node.get("multipleOf") is not None and node["multipleOf"] <= 0:
        problems.append(f"{path}: multipleOf must be positive")
    for value in node.get("enum", []) if kind is not None else []:
        if not _has_type(value, kind):
            problems.append(f"{path}: enum value {value!r} is not of type {kind}")
    if "required" in node:
        missing = [r for r in node["required"] if r not in node.get("properties", {})]
        if missing and not node.get("x-kubernetes-preserve-unknown-fields"):
            problems.append(f"{path}: required names undeclared properties {missing}")


def _check_list_and_map_types(node: Schema, path: str, problems: list[str]) -> None:
    list_type = node.get("x-kubernetes-list-type")
    keys = node.get("x-kubernetes-list-map-keys")
    if list_type is not None:
        if node.get("type") != "array":
            problems.append(f"{path}: x-kubernetes-list-type needs type array")
        if list_type not in ("atomic", "set", "map"):
            problems.append(f"{path}: x-kubernetes-list-type must be atomic, set or map")
    if keys is not None and list_type != "map":
        problems.append(f"{path}: x-kubernetes-list-map-keys needs x-kubernetes-list-type: map")
    items = node.get("items", {})
    if list_type == "set":
        scalar = items.get("type") in ("string", "integer", "number", "boolean")
        atomic = items.get("x-kubernetes-map-type") == "atomic" or (
            items.get("x-kubernetes-list-type") == "atomic"
        )
        if not (scalar or atomic):
            problems.append(f"{path}: items of a set must be scalars or atomic")
    if list_type == "map":
        if items.get("type") != "object":
            problems.append(f"{path}: items of a map list must be objects")
        if not keys:
            problems.append(f"{path}: a map list needs x-kubernetes-list-map-keys")
        properties = items.get("properties", {})
        required = set(items.get("required", []))
        for key in keys or []:
            prop = properties.get(key)
            if prop is None:
                problems.append(f"{path}: list map key {key!r} is not a property of the items")
                continue
            if prop.get("type") not in ("string", "integer", "number", "boolean"):
                problems.append(f"{path}: list map key {key!r} must be a scalar")
            if key not in required and "default" not in prop:
                problems.append(f"{path}: list map key {key!r} must be required or defaulted")
    map_type = node.get("x-kubernetes-map-type")
    if map_type is not None:
        if node.get("type") != "object":
            problems.append(f"{path}: x-kubernetes-map-type needs type object")
        if map_type not in ("atomic", "granular"):
            problems.append(f"{path}: x-kubernetes-map-type must be atomic or granular")


def _check_rules(node: Schema, path: str, problems: list[str]) -> None:
    for index, rule in enumerate(node.get("x-kubernetes-validations", [])):
        where = f"{path}: x-kubernetes-validations[{index}]"
        if not isinstance(rule, dict) or not str(rule.get("rule", "")).strip():
            problems.append(f"{where}: rule must be a non-empty string")
            continue
        message = rule.get("message")
        if message is not None and ("\n" in message or not message.strip()):
            problems.append(f"{where}: message must be one non-blank line")
        if rule.get("reason") is not None and rule["reason"] not in _REASONS:
            problems.append(f"{where}: reason must be one of {sorted(_REASONS)}")
        if rule.get("fieldPath") is not None and not str(rule["fieldPath"]).startswith("."):
            problems.append(f"{where}: fieldPath must start with '.'")
        unknown = set(rule) - {
            "rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"
        }  # fmt: skip
        if unknown:
            problems.append(f"{where}: unknown keys {sorted(unknown)}")


def _check_metadata(metadata: Schema, problems: list[str]) -> None:
    """At the root, ``metadata`` may only restrict ``name`` and ``generateName``."""
    allowed = {"type", "properties", "description"}
    if set(metadata) - allowed:
        problems.append(
            f".metadata: only type and restrictions of name and generateName are allowed, "
            f"found {sorted(set(metadata) - allowed)}"
        )
    if metadata.get("type") != "object":
        problems.append(".metadata: type must be object")
    for name in set(metadata.get("properties", {})) - {"name", "generateName"}:
        problems.append(f".metadata.{name}: only name and generateName may be restricted")
    for name, child in metadata.get("properties", {}).items():
        if child.get("type") != "string" or "default" in child:
            problems.append(f".metadata.{name}: must be type string without default")


def _has_type(value: Any, kind: str | None) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def value_problem(value: Any, schema: Schema, path: str = ".") -> str | None:
    """Why ``value`` is invalid for, or not pruned by, ``schema`` (``None`` when it is fine).

    Used for defaults: the apiserver refuses a CRD whose defaults fail their own schema or
    contain fields pruning would drop.
    """
    if value is None:
        return None if schema.get("nullable") else f"{path}: null is not allowed"
    if schema.get("x-kubernetes-int-or-string"):
        if not isinstance(value, int | str) or isinstance(value, bool):
            return f"{path}: must be an integer or a string"
        return None
    kind = schema.get("type")
    if kind is not None and not _has_type(value, kind):
        return f"{path}: {value!r} is not of type {kind}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{path}: {value!r} is not one of {schema['enum']}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        problem = _number_problem(value, schema, path)
        if problem:
            return problem
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            return f"{path}: shorter than {schema['minLength']}"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{path}: longer than {schema['maxLength']}"
        if "pattern" in schema and not re.search(schema["pattern"], value):
            return f"{path}: does not match {schema['pattern']!r}"
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return f"{path}: fewer than {schema['minItems']} items"
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            return f"{path}: more than {schema['maxItems']} items"
        for index, item in enumerate(value):
            problem = value_problem(item, schema.get("items", {}), f"{path}[{index}]")
            if problem:
                return problem
    if isinstance(value, dict):
        return _object_problem(value, schema, path)
    return None


def _number_problem(value: float, schema: Schema, path: str) -> str | None:
    if "minimum" in schema:
        low = schema["minimum"]
        if value < low or (schema.get("exclusiveMinimum") and value == low):
            return f"{path}: {value} is below the minimum {low}"
    if "maximum" in schema:
        high = schema["maximum"]
        if value > high or (schema.get("exclusiveMaximum") and value == high):
            return f"{path}: {value} is above the maximum {high}"
    step = schema.get("multipleOf")
    if step:
        quotient = value / step
        if not math.isclose(quotient, round(quotient), rel_tol=0, abs_tol=1e-9):
            return f"{path}: {value} is not a multiple of {step}"
    return None


def _object_problem(value: dict[str, Any], schema: Schema, path: str) -> str | None:
    properties = schema.get("properties", {})
    if len(value) < schema.get("minProperties", 0):
        return f"{path}: fewer than {schema['minProperties']} properties"
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        return f"{path}: more than {schema['maxProperties']} properties"
    for name in schema.get("required", []):
        if name not in value and "default" not in properties.get(name, {}):
            return f"{path}: required field {name!r} is missing"
    additional = schema.get("additionalProperties")
    preserve = schema.get("x-kubernetes-preserve-unknown-fields")
    for name, item in value.items():
        child_path = f"{path.rstrip('.')}.{name}"
        if name in properties:
            problem = value_problem(item, properties[name], child_path)
        elif isinstance(additional, dict):
            problem = value_problem(item, additional, child_path)
        elif additional is True or preserve:
            problem = None
        else:
            problem = f"{child_path}: unknown field (it would be pruned)"
        if problem:
            return problem
    return None
