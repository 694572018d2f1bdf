"""pydantic model → structural OpenAPI v3 schema, as ``CustomResourceDefinition`` versions need.

The converter starts from pydantic's own JSON schema (so field aliases, defaults, constraints
and markers are exactly what pydantic validates with) and rewrites it into the subset the
apiserver accepts:

* ``$ref``/``$defs`` are inlined; a model met again inside itself is a recursion → error;
* ``X | None`` is ``X``, ``nullable`` unless its default is ``None`` (then absent already reads
  back as None) — see ``_Converter._union``; ``Nullable()`` makes any field nullable;
* ``Literal``/``Enum``/``const`` → ``enum``; ``int | str`` → ``x-kubernetes-int-or-string``
  (with controller-gen's ``anyOf: [{type: integer}, {type: string}]``);
* ``dict[str, X]`` → ``additionalProperties``; ``Any``, ``dict[str, Any]`` and models with
  ``extra="allow"`` → ``x-kubernetes-preserve-unknown-fields``;
* unions of models → one object holding every variant's fields, the tag's values merged into
  one ``enum``, and a CEL rule that exactly one variant's fields are set;
* ``exclusiveMinimum: 3`` (JSON Schema 2020) → ``minimum: 3, exclusiveMinimum: true`` (OpenAPI
  3.0); ``set[X]`` (``uniqueItems``) → ``x-kubernetes-list-type: set``; same-typed tuples →
  arrays of fixed length;
* titles, examples and other keywords the apiserver does not take are dropped.

Anything else with no structural form raises ``SchemaError`` naming the model and field path;
``Schemaless()`` on the field is the escape hatch. So do numbers a CRD cannot carry (``inf`` and
``nan`` defaults, bounds beyond what the apiserver checks: ``crdkit.crd.limits``) and two fields
sharing one JSON name (``crdkit.crd.names``): gen-crd never writes a CRD the apiserver refuses
or one that silently disagrees with the model.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import SchemaSerializer, to_jsonable_python

from crdkit.crd.errors import SchemaError
from crdkit.crd.formats import KNOWN_FORMATS
from crdkit.crd.limits import (
    NUMERIC_BOUNDS,
    SIZE_BOUNDS,
    bound_problem,
    non_finite,
    size_problem,
    typed_default_problem,
)
from crdkit.crd.markers import SCHEMALESS_KEY
from crdkit.crd.names import check_json_names
from crdkit.crd.re2 import re2_problem
from crdkit.crd.types import BYTES_KEY, DURATION_KEY
from crdkit.crd.unions import merge_variants

if TYPE_CHECKING:
    from pydantic import BaseModel

    from crdkit.resources import CustomResource

__all__ = ["crd_schema", "structural_schema"]

Schema = dict[str, Any]

# Keywords passed through unchanged (after their children are converted).
_VALUE_KEYWORDS = (
    "description",
    "format",
    "default",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "nullable",
)
# Keywords with no meaning for the apiserver, dropped silently.
_DROPPED = frozenset(
    {"title", "examples", "readOnly", "writeOnly", "deprecated", "$comment", "discriminator"}
)
# Scalar type names in pydantic's JSON schema and in OpenAPI.
_SCALARS = frozenset({"string", "integer", "number", "boolean"})
# Formats pydantic writes that say nothing the apiserver checks (or checks differently).
_DROPPED_FORMATS = frozenset({"path", "multi-host-uri", "json-string", "time"})
_ABSENT = object()
# pydantic writes a Field constraint it could not fold into the type's schema (``Field(ge=0)``
# on ``Int32 | None``, or on the items of a list of a validated type) under its own name.
_PYDANTIC_CONSTRAINTS = {
    "ge": "minimum",
    "le": "maximum",
    "gt": "exclusiveMinimum",
    "lt": "exclusiveMaximum",
    "multiple_of": "multipleOf",
    "min_length": "minLength",
    "max_length": "maxLength",
}


class _CrdJsonSchema(GenerateJsonSchema):
    """pydantic's JSON schema, except that a default keeps its ``inf`` and ``nan``.

    pydantic encodes a default through its JSON serialiser, which turns a ``nan`` or ``inf``
    inside a list or dict into ``null``: ``[1.0, nan]`` would reach the CRD as ``[1.0, null]``,
    a different default from the model's. Kept as they are, the converter sees them and
    refuses them with the field's path.
    """

    def default_schema(self, schema: Any) -> Any:
        """A default as the field itself writes it, not as its Python type would be written.

        pydantic encodes a default by its Python type, so a ``Bytes`` default would be its
        UTF-8 text and a ``Duration`` one ISO 8601: text the field's own serialiser never
        writes, and the apiserver's format check may refuse. The field's serialiser decides.
        """
        json_schema = super().default_schema(schema)
        if "default" not in json_schema:
            return json_schema
        default = self.get_default_value(schema)
        try:
            if non_finite(to_jsonable_python(default, inf_nan_mode="constants")) is not None:
                return json_schema  # kept as it is, to be refused with the field's path
            serializer = SchemaSerializer(schema["schema"])
            json_schema["default"] = serializer.to_python(default, mode="json", by_alias=True)
        except Exception:  # a schema that cannot be serialised on its own (a definition ref)
            return json_schema
        return json_schema

    def encode_default(self, dft: Any) -> Any:
        encoded = super().encode_default(dft)
        try:
            raw = to_jsonable_python(dft, by_alias=self.by_alias, inf_nan_mode="constants")
        except Exception:  # a type only pydantic's own encoder handles: nothing to look at
            return encoded
        return raw if non_finite(raw) is not None else encoded


class _Converter:
    def __init__(self, model: str, defs: dict[str, Schema]) -> None:
        self.model = model
        self.defs = defs

    def error(self, path: str, reason: str) -> SchemaError:
        return SchemaError(self.model, path, reason)

    # -- entry -----------------------------------------------------------------------------

    def convert(self, node: Schema, path: str, stack: tuple[str, ...]) -> Schema:
        node = dict(node)
        for raw, keyword in _PYDANTIC_CONSTRAINTS.items():
            if raw in node:
                if keyword in node and node[keyword] != node[raw]:
                    raise self.error(path, f"{raw}={node[raw]!r} disagrees with {keyword}")
                node[keyword] = node.pop(raw)
        if node.get(SCHEMALESS_KEY):
            return _schemaless(node)
        if "$ref" in node:
            return self._ref(node, path, stack)
        if "allOf" in node:
            parts = node.pop("allOf")
            if len(parts) != 1:
                raise self.error(path, "allOf of several schemas has no structural form")
            return self.convert({**parts[0], **node}, path, stack)
        if "anyOf" in node or "oneOf" in node:
            return self._union(node, path, stack)
        if "const" in node:
            node.setdefault("enum", [node.pop("const")])
        return self._typed(node, path, stack)

    # -- references and unions ---------------------------------------------------------------

    def _ref(self, node: Schema, path: str, stack: tuple[str, ...]) -> Schema:
        name = node.pop("$ref").rsplit("/", 1)[-1]
        if name in stack:
            raise self.error(
                path,
                f"recursive model {name} has no structural form; mark the field Schemaless() "
                "to store it unvalidated",
            )
        if name not in self.defs:
            raise self.error(path, f"unresolvable reference to {name}")
        # Siblings of $ref (description, default, markers) override the referenced schema.
        merged = {**copy.deepcopy(self.defs[name]), **node}
        if "x-kubernetes-validations" in node and "x-kubernetes-validations" in self.defs[name]:
            merged["x-kubernetes-validations"] = [
                *self.defs[name]["x-kubernetes-validations"],
                *node["x-kubernetes-validations"],
            ]
        return self.convert(merged, path, (*stack, name))

    def _resolve(self, node: Schema, stack: tuple[str, ...]) -> tuple[Schema, tuple[str, ...]]:
        """The schema behind a chain of $ref, for looking at a union branch's shape."""
        while "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name in stack or name not in self.defs:
                break
            stack = (*stack, name)
            node = {**self.defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return node, stack

    def _union(self, node: Schema, path: str, stack: tuple[str, ...]) -> Schema:
        branches = node.pop("anyOf", None) or node.pop("oneOf")
        discriminator = node.pop("discriminator", None)
        non_null = [b for b in branches if b.get("type") != "null"]
        if not non_null:
            raise self.error(path, "a field that can only be null has no structural form")
        # The apiserver drops a null it is not told to keep (``nullable``) before validating,
        # and crdkit writes None as an absent field, except where absent means something else.
        # So null is kept unless absent already reads back as None, i.e. the default is None:
        # * no default (pydantic requires the key but accepts null: ``x: int | None``): the
        #   CRD keeps it required and makes it nullable, the one choice that agrees with
        #   pydantic on every document: ``{"x": null}`` and ``{"x": 1}`` accepted, ``{}``
        #   refused by both. Not required would let the apiserver store ``{}``, which every
        #   list and watch of the kind would then fail to decode. crdkit's writer sends such
        #   a None as null (``ApiModel``), so what it writes is accepted;
        # * a default other than None (or a default_factory): null must not become the default;
        # * items and map values (``list[int | None]``): pydantic keeps their nulls.
        if len(non_null) < len(branches) and node.get("default", _ABSENT) is not None:
            node["nullable"] = True
        if node.get("default", _ABSENT) is None:
            node.pop("default")
        if len(non_null) == 1:
            return self.convert(_merge_siblings(non_null[0], node), path, stack)
        if node.pop("x-kubernetes-int-or-string", False) or _is_int_or_string(non_null):
            return self._int_or_string(node, path)
        resolved = [self._resolve(b, stack)[0] for b in non_null]
        if all(r.get("type") == "object" and "properties" in r for r in resolved):
            return self._hoist(non_null, node, path, stack, discriminator)
        kinds = sorted({str(r.get("type", "a model")) for r in resolved})
        raise self.error(
            path,
            f"a union of {' and '.join(kinds)} has no structural form (only int | str and "
            "unions of models can be expressed); mark the field Schemaless() to store it "
            "unvalidated",
        )

    def _hoist(
        self,
        branches: list[Schema],
        siblings: Schema,
        path: str,
        stack: tuple[str, ...],
        discriminator: Schema | None,
    ) -> Schema:
        tag = discriminator.get("propertyName") if discriminator else None
        variants: list[tuple[str, Schema]] = []
        for branch in branches:
            _, branch_stack = self._resolve(branch, stack)
            name = branch_stack[-1] if len(branch_stack) > len(stack) else "variant"
            converted = self.convert(branch, path, stack)
            if converted.get("x-kubernetes-validations"):
                raise self.error(path, f"union variant {name} has its own CEL rules; not supported")
            variants.append((name, converted))
        out = merge_variants(variants, tag, lambda where, why: self.error(path + where, why))
        out.update(self._values(siblings, path))
        out["x-kubernetes-validations"] = [
            *siblings.get("x-kubernetes-validations", []),
            *out["x-kubernetes-validations"],
        ]
        for key, value in siblings.items():
            if key.startswith("x-kubernetes-") and key != "x-kubernetes-validations":
                out[key] = value
        return out

    def _int_or_string(self, node: Schema, path: str) -> Schema:
        # Spelled as controller-gen spells it, with the anyOf: without it the apiserver takes
        # 4.0000000001 for an integer (and stores that float), with it only whole numbers.
        # CEL rules (and other x-kubernetes- keys) are kept: the apiserver runs them on an
        # int-or-string value (``type(self) == int ? ... : ...``), as pydantic runs ``check``.
        out: Schema = {
            "x-kubernetes-int-or-string": True,
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            **self._values(node, path),
        }
        for key, value in node.items():
            if key.startswith("x-kubernetes-") and key not in out:
                out[key] = value
        self._reject_unknown(node, path)
        return out

    # -- typed nodes ---------------------------------------------------------------------------

    def _typed(self, node: Schema, path: str, stack: tuple[str, ...]) -> Schema:
        kind = node.get("type")
        if isinstance(kind, list):
            raise self.error(path, f"a value of several types {kind} has no structural form")
        if kind is None:
            if "enum" in node:
                kind = _enum_type(node["enum"])
                if kind is None:
                    raise self.error(path, "an enum mixing value types has no structural form")
            elif node.get("x-kubernetes-int-or-string"):
                return self._int_or_string(node, path)
            else:  # Any: any JSON value, kept
                return {
                    "x-kubernetes-preserve-unknown-fields": True,
                    **self._values(node, path),
                }
        if kind == "null":
            raise self.error(path, "a field that can only be null has no structural form")
        out: Schema = {"type": kind}
        if kind == "object":
            out.update(self._object(node, path, stack))
        elif kind == "array":
            out.update(self._array(node, path, stack))
        elif kind not in _SCALARS:
            raise self.error(path, f"unknown type {kind!r}")
        out.update(self._values(node, path))
        for key, value in node.items():
            if key.startswith("x-kubernetes-") and key not in out:
                out[key] = value
        if out.get("default") is not None:
            out["default"] = _prune_default(out["default"], out)
            problem = typed_default_problem(out["default"], out)
            if problem is not None:
                raise self.error(path, problem)
        if "additionalProperties" in out and out.get("x-kubernetes-preserve-unknown-fields"):
            raise self.error(
                path, "PreserveUnknownFields() on a typed map has no structural form; use a model"
            )
        self._reject_unknown(node, path)
        return out

    def _object(self, node: Schema, path: str, stack: tuple[str, ...]) -> Schema:
        out: Schema = {}
        properties = node.get("properties")
        extra = node.get("additionalProperties")
        if "patternProperties" in node or "propertyNames" in node:
            raise self.error(
                path, "constraints on map keys have no structural form; use plain str keys"
            )
        if properties is not None:
            out["properties"] = {
                name: self.convert(schema, f"{path}.{name}", stack)
                for name, schema in properties.items()
            }
            if node.get("required"):
                out["required"] = sorted(node["required"])
            if extra is True or extra == {}:
                out["x-kubernetes-preserve-unknown-fields"] = True
            elif isinstance(extra, dict):
                raise self.error(path, "typed extra fields beside declared ones: not structural")
        elif extra is True or extra == {} or extra is None:
            out["x-kubernetes-preserve-unknown-fields"] = True
        elif isinstance(extra, dict):
            value_schema = self.convert(extra, f"{path}[*]", stack)
            if value_schema == {"x-kubernetes-preserve-unknown-fields": True}:
                out["x-kubernetes-preserve-unknown-fields"] = True
            else:
                out["additionalProperties"] = value_schema
        return out

    def _array(self, node: Schema, path: str, stack: tuple[str, ...]) -> Schema:
        out: Schema = {}
        if "prefixItems" in node:
            items = [self.convert(i, f"{path}[*]", stack) for i in node["prefixItems"]]
            if any(item != items[0] for item in items) or "items" in node:
                raise self.error(
                    path,
                    "a tuple of mixed types has no structural form; use a list or a model, "
                    "or mark the field Schemaless()",
                )
            out["items"] = items[0]
        elif "items" in node:
            out["items"] = self.convert(node["items"], f"{path}[*]", stack)
        else:
            out["items"] = {"x-kubernetes-preserve-unknown-fields": True}
        if node.get("uniqueItems"):
            item = out["items"]
            if item.get("type") not in _SCALARS:
                raise self.error(
                    path, "a set of non-scalar items cannot be checked by the apiserver"
                )
            if node.get("x-kubernetes-list-type", "set") != "set":
                raise self.error(path, "a set must have list type 'set'")
            out["x-kubernetes-list-type"] = "set"
        return out

    def _values(self, node: Schema, path: str) -> Schema:
        """The value checks and documentation of a node, in OpenAPI 3.0 form."""
        out: Schema = {}
        for key in _VALUE_KEYWORDS:
            if key not in node:
                continue
            value = node[key]
            if key == "default" and value is None:
                continue  # absent reads back as None; a null default would only add noise
            if key == "default" and non_finite(value) is not None:
                what = "is" if isinstance(value, float) else f"holds {non_finite(value)}, which is"
                raise self.error(
                    path,
                    f"default {value!r} {what} not finite: JSON, and so a CRD, cannot carry it; "
                    "use a finite default",
                )
            if key in NUMERIC_BOUNDS:
                problem = bound_problem(key, value, node.get("type"))
                if problem is not None:
                    raise self.error(path, problem)
            if key in SIZE_BOUNDS:
                problem = size_problem(key, value)
                if problem is not None:
                    raise self.error(path, problem)
            if key == "format":
                if value == "duration" and not node.get(DURATION_KEY):
                    raise self.error(
                        path,
                        "a timedelta of a plain pydantic model is written as ISO 8601, which "
                        "the apiserver's duration format refuses; derive the model from "
                        "ApiModel or annotate the field as crdkit.crd.Duration",
                    )
                if value == "binary":
                    raise self.error(
                        path,
                        "bytes of a plain pydantic model are written as UTF-8 text, which a "
                        "CRD cannot check; derive the model from ApiModel or annotate the field "
                        "as crdkit.resources.Bytes (base64, format: byte)",
                    )
                if value in _DROPPED_FORMATS or value not in KNOWN_FORMATS:
                    continue
            if key == "pattern":
                problem = re2_problem(value)
                if problem is not None:
                    raise self.error(path, problem)
            if key in ("exclusiveMinimum", "exclusiveMaximum") and not isinstance(value, bool):
                bound = "minimum" if key == "exclusiveMinimum" else "maximum"
                out[bound] = value
                value = True
            out[key] = value
        if "enum" in out:
            out["enum"] = list(out["enum"])
        return out

    def _reject_unknown(self, node: Schema, path: str) -> None:
        known = {
            *_VALUE_KEYWORDS,
            *_DROPPED,
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "prefixItems",
            "uniqueItems",
            "const",
            DURATION_KEY,
            BYTES_KEY,
            SCHEMALESS_KEY,
        }
        for key in node:
            if key not in known and not key.startswith("x-kubernetes-"):
                raise self.error(path, f"JSON schema keyword {key!r} has no structural form")


def _prune_default(value: Any, schema: Schema) -> Any:
    """A default as the apiserver would store it: no nulls where null is not allowed.

    pydantic writes a model default with every field, unset optional ones as ``null``; the
    apiserver refuses a default that fails its own schema, so those nulls are dropped.
    """
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        additional = schema.get("additionalProperties")
        pruned = {}
        for key, item in value.items():
            child = properties.get(key, additional if isinstance(additional, dict) else {})
            if item is None and not child.get("nullable"):
                continue
            pruned[key] = _prune_default(item, child)
        return pruned
    if isinstance(value, list):
        return [_prune_default(item, schema.get("items", {})) for item in value]
    return value


def _schemaless(node: Schema) -> Schema:
    out: Schema = {"x-kubernetes-preserve-unknown-fields": True}
    if "description" in node:
        out["description"] = node["description"]
    return out


def _merge_siblings(branch: Schema, siblings: Schema) -> Schema:
    merged = {**branch, **siblings}
    if "x-kubernetes-validations" in branch and "x-kubernetes-validations" in siblings:
        merged["x-kubernetes-validations"] = [
            *branch["x-kubernetes-validations"],
            *siblings["x-kubernetes-validations"],
        ]
    return merged


def _is_int_or_string(branches: list[Schema]) -> bool:
    return sorted(str(b.get("type")) for b in branches) == ["integer", "string"] and all(
        set(b) == {"type"} for b in branches
    )


def _enum_type(values: list[Any]) -> str | None:
    kinds = set()
    for value in values:
        if isinstance(value, bool):
            kinds.add("boolean")
        elif isinstance(value, int):
            kinds.add("integer")
        elif isinstance(value, float):
            kinds.add("number")
        elif isinstance(value, str):
            kinds.add("string")
        else:
            return None
    if kinds == {"integer", "number"}:
        return "number"
    return kinds.pop() if len(kinds) == 1 else None


def structural_schema(model: type[BaseModel], *, name: str | None = None) -> Schema:
    """The structural schema of any pydantic model (validation mode, camelCase by alias)."""
    label = name or model.__name__
    check_json_names(model, label)
    try:
        raw = model.model_json_schema(
            by_alias=True, mode="validation", schema_generator=_CrdJsonSchema
        )
    except Exception as error:  # pydantic refuses to build a JSON schema for the type
        raise SchemaError(label, "", f"pydantic cannot describe it: {error}") from error
    defs = raw.pop("$defs", {})
    return _Converter(label, defs).convert(raw, "", (model.__name__,))


def crd_schema(resource: type[CustomResource]) -> Schema:
    """The ``openAPIV3Schema`` of one version of a custom resource.

    apiVersion, kind and metadata get the standard CRD shape (the apiserver validates
    metadata itself and allows nothing else in it); every other field is converted.
    """
    options = resource.__crd_options__
    label = (
        f"{resource.__name__} ({options.group}/{options.version})" if options else resource.__name__
    )
    schema = structural_schema(resource, name=label)
    properties = dict(schema.get("properties", {}))
    properties["apiVersion"] = {
        "type": "string",
        "description": "APIVersion defines the versioned schema of this representation of an "
        "object.",
    }
    properties["kind"] = {
        "type": "string",
        "description": "Kind is a string value representing the REST resource this object "
        "represents.",
    }
    properties["metadata"] = {"type": "object"}
    schema["properties"] = properties
    schema.pop("x-kubernetes-preserve-unknown-fields", None)
    required = [
        r for r in schema.get("required", []) if r not in ("apiVersion", "kind", "metadata")
    ]
    if required:
        schema["required"] = sorted(required)
    else:
        schema.pop("required", None)
    schema.pop("default", None)
    return schema
