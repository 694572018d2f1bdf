"""The CEL types the apiserver gives a schema's values, with the sizes its cost estimate uses.

It follows ``SchemaDeclType`` (k8s.io/apiserver ``pkg/cel/common/schemas.go``, Kubernetes
1.37): every value has a *max elements* (a string's length, a list's items, a map's entries)
and a *min serialized size* (its shortest JSON). A bound the schema does not give is what
fits a request: the apiserver's 3 MiB request limit divided by the element's shortest JSON.
A ``maxLength`` counts four bytes a character. Scalars other than strings have no elements.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from crdkit.crd.cel import cel_field

__all__ = [
    "MAX_REQUEST_SIZE",
    "Decl",
    "decl_type",
    "max_cardinality",
]

MAX_REQUEST_SIZE = 3 * 1024 * 1024
# apiserver pkg/cel/limits.go
_MAX_DATETIME_JSON = 32
_MAX_DURATION_JSON = 32
_JSON_DATE = 12
_MIN_DURATION_JSON = 3
_MIN_DATETIME_JSON = 21
_NAME_MAX_LENGTH = 253  # metadata.name is a DNS subdomain
_SCALARS = {"boolean": ("bool", 4), "number": ("double", 1), "integer": ("int", 1)}


@dataclass
class Decl:
    """A CEL type: ``kind`` is bool, int, uint, double, string, bytes, duration, timestamp,
    null, type, dyn, list, map, object, or ``opaque:<name>`` (quantity, url, ip, cidr)."""

    kind: str
    max_elements: int = 0
    min_size: int = 0
    fields: dict[str, Decl] = field(default_factory=dict)
    elem: Decl | None = None
    key: Decl | None = None
    # max_elements comes from the request size, not from a bound in the schema
    unbounded: bool = False


def _string_max(schema: dict[str, Any]) -> int:
    if schema.get("x-kubernetes-int-or-string"):
        return MAX_REQUEST_SIZE - 2
    fixed = {"duration": _MAX_DURATION_JSON, "date": _JSON_DATE, "date-time": _MAX_DATETIME_JSON}
    return fixed.get(schema.get("format", ""), MAX_REQUEST_SIZE - 2)


def _length_max(schema: dict[str, Any]) -> int:
    return max(int(schema["maxLength"]), 0) * 4


def _with_type_and_object_meta(schema: dict[str, Any]) -> dict[str, Any]:
    """The root of a resource, where apiVersion, kind and metadata's names are always typed."""
    properties = dict(schema.get("properties") or {})
    metadata = (properties.get("metadata") or {}).get("properties") or {}

    def capped(existing: dict[str, Any] | None, limit: int) -> dict[str, Any]:
        given = (existing or {}).get("maxLength")
        return {"type": "string", "maxLength": min(limit, given) if given is not None else limit}

    properties["kind"] = {"type": "string"}
    properties["apiVersion"] = {"type": "string"}
    properties["metadata"] = {
        "type": "object",
        "properties": {
            "name": capped(metadata.get("name"), _NAME_MAX_LENGTH),
            "generateName": capped(metadata.get("generateName"), _NAME_MAX_LENGTH - 1),
        },
    }
    return {**schema, "properties": properties}


def decl_type(schema: dict[str, Any], resource_root: bool = False) -> Decl | None:
    """The CEL type of values of ``schema``; ``None`` where CEL cannot see them."""
    if schema.get("x-kubernetes-int-or-string"):
        top = _length_max(schema) if "maxLength" in schema else _string_max(schema)
        return Decl("dyn", max_elements=top, min_size=1, unbounded="maxLength" not in schema)
    if resource_root:
        schema = _with_type_and_object_meta(schema)
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        if not isinstance(items, dict):
            return None
        elem = decl_type(items, bool(items.get("x-kubernetes-embedded-resource")))
        if elem is None:
            return None
        if "maxItems" in schema:
            top = max(int(schema["maxItems"]), 0)
        else:
            top = (MAX_REQUEST_SIZE - 2) // (elem.min_size + 1)
        return Decl(
            "list", max_elements=top, min_size=2, elem=elem, unbounded="maxItems" not in schema
        )
    if kind == "object":
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            values = decl_type(additional, bool(additional.get("x-kubernetes-embedded-resource")))
            if values is None:
                return None
            if "maxProperties" in schema:
                top = max(int(schema["maxProperties"]), 0)
            else:
                # a key's quotes, colon and comma, and at least one character of key
                top = (MAX_REQUEST_SIZE - 2) // (values.min_size + 6)
            return Decl(
                "map",
                max_elements=top,
                min_size=2,
                elem=values,
                key=Decl("string"),
                unbounded="maxProperties" not in schema,
            )
        required = set(schema.get("required") or [])
        fields: dict[str, Decl] = {}
        min_size = 2  # {}
        for name, prop in (schema.get("properties") or {}).items():
            prop_type = decl_type(prop, bool(prop.get("x-kubernetes-embedded-resource")))
            if prop_type is None:
                continue
            # a name CEL cannot spell is not a field of the object in rules
            with contextlib.suppress(ValueError):
                fields[cel_field(name)] = prop_type
            # defaults are filled in before validation, so only required undefaulted ones count
            if name in required and "default" not in prop:
                min_size += len(name) + prop_type.min_size + 4
        return Decl("object", min_size=min_size, fields=fields)
    if kind == "string":
        fmt = schema.get("format")
        if fmt == "byte":
            top = max(int(schema["maxLength"]), 0) if "maxLength" in schema else _string_max(schema)
            return Decl("bytes", max_elements=top, min_size=2, unbounded="maxLength" not in schema)
        if fmt in ("duration", "date", "date-time"):
            shortest_json = {"duration": _MIN_DURATION_JSON, "date": _JSON_DATE}
            cel_kind = "duration" if fmt == "duration" else "timestamp"
            shortest = shortest_json.get(fmt, _MIN_DATETIME_JSON)
            return Decl(cel_kind, max_elements=_string_max(schema), min_size=shortest)
        if "maxLength" in schema:
            top = _length_max(schema)
        elif schema.get("enum"):
            # Go's len(): bytes
            top = max((len(v.encode()) for v in schema["enum"] if isinstance(v, str)), default=0)
        else:
            top = _string_max(schema)
        bounded = "maxLength" in schema or bool(schema.get("enum"))
        return Decl("string", max_elements=top, min_size=2, unbounded=not bounded)
    if kind in _SCALARS:
        cel_kind, least = _SCALARS[kind]
        return Decl(cel_kind, min_size=least)
    return None


def max_cardinality(min_size: int) -> int:
    """How often a value of this shortest JSON fits a request: the cardinality the apiserver
    assumes for a rule under an unbounded list or map."""
    return MAX_REQUEST_SIZE // (min_size + 1)
