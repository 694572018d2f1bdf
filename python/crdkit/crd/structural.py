"""An offline check that a CRD schema is one the apiserver accepts.

It follows apiextensions-apiserver (Kubernetes 1.37): the structural invariants and
completeness of ``pkg/apiserver/schema`` (junctors walked at any depth, the int-or-string
``anyOf``/``allOf`` exemption), the per-node rules of the CRD validation (forbidden keywords,
list and map types, ``x-kubernetes-validations`` shape, metadata restrictions) and the
validity of defaults. A bad schema is reported at generation time with the path of every
offending node instead of as one opaque 422 at install time. ``crd_schema`` output always
passes; the checker also guards hand-edited schemas and the converter itself. CEL rules are
not compiled here; their cost is estimated by ``crdkit.crd.budget``.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from crdkit.crd.formats import FORMAT_CHECKS
from crdkit.crd.re2 import re2_problem

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["schema_violations", "value_problem"]

Schema = dict[str, Any]

_ALLOWED = frozenset(
    {
        "type", "format", "description", "default", "enum", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
        "pattern", "minItems", "maxItems", "minProperties", "maxProperties", "nullable",
        "uniqueItems",
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
    "const": "const is not allowed (use enum)",
}
_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean"})
_JUNCTORS = ("allOf", "anyOf", "oneOf")
_META_FIELDS = ("metadata", "kind", "apiVersion")
# The apiserver exempts exactly this anyOf (each branch a bare type, in this order) from the
# "no type inside a junctor" rule: it is how int-or-string values are spelled.
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]
# What a schema under allOf/anyOf/oneOf/not must leave unset, in the apiserver's order
# (ValidateStructural's nested value validation); additionalProperties is handled apart since
# ``false`` is allowed there.
_NESTED_FORBIDDEN = (
    ("type", "must be empty"),
    ("default", "must be undefined"),
    ("title", "must be empty"),
    ("description", "must be empty"),
    ("nullable", "must be false"),
    ("x-kubernetes-preserve-unknown-fields", "must be false"),
    ("x-kubernetes-embedded-resource", "must be false"),
    ("x-kubernetes-int-or-string", "must be false"),
    ("x-kubernetes-list-map-keys", "must be empty"),
    ("x-kubernetes-list-type", "must be undefined"),
    ("x-kubernetes-map-type", "must be undefined"),
    ("x-kubernetes-validations", "must be empty"),
)
# What the root may hold when the status subresource is on: the apiserver validates status
# with properties.status alone, so nothing at the root may constrain it.
_STATUS_ROOT = frozenset(
    {
        "description", "type", "format", "title", "maximum", "exclusiveMaximum", "minimum",
        "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
        "uniqueItems", "multipleOf", "required", "items", "properties", "externalDocs",
        "example", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-validations",
    }
)  # fmt: skip
# whether a rule reads oldSelf; the apiserver knows from compiling it, this is the identifier
_OLD_SELF = re.compile(r"\boldSelf\b")
_REASONS = frozenset(
    {"FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"}
)


def schema_violations(schema: Schema, *, status_subresource: bool = False) -> list[str]:
    """Every violation in an ``openAPIV3Schema`` the apiserver would refuse, as ``<path>: <rule>``.

    The rules are those of apiextensions-apiserver: the structural invariants and completeness
    (``pkg/apiserver/schema``), the CRD schema validation (``validation.go``) and the defaults'
    validity. Paths read ``.spec.a`` for properties, ``[*]`` for items and additional
    properties, and ``(anyOf[0])`` for a junctor's branch. With ``status_subresource`` the
    root may only hold the keywords that still hold once ``status`` is split off. Keywords
    the apiserver does not know are reported too: it drops them silently, or refuses them
    under strict field validation (kubectl's default).
    """
    problems: list[str] = []
    if not isinstance(schema, dict):
        return [".: a schema must be an object"]
    if schema.get("nullable") is True:
        problems.append(".: nullable cannot be true at the root")
    if status_subresource:
        extra = sorted(k for k, v in schema.items() if k not in _STATUS_ROOT and _is_set(v))
        if extra:
            problems.append(
                f".: with the status subresource the root may not have {extra} "
                f"(only {sorted(_STATUS_ROOT)})"
            )
    _Checker(problems).structural(schema, ".", _ROOT)
    _check_completeness(schema, problems)
    _check_schema(schema, ".", problems, _Context(root=True))
    return problems


_ROOT, _ITEM, _FIELD = "root", "item", "field"


def _prop(path: str, name: str) -> str:
    return f"{path[:-1] if path == '.' else path}.{name}"


def _items(path: str) -> str:
    return f"{'' if path == '.' else path}[*]"


def _children(node: Schema) -> dict[str, Any]:
    properties = node.get("properties")
    return properties if isinstance(properties, dict) else {}


def _schema_of(value: Any) -> Schema | None:
    return value if isinstance(value, dict) else None


class _Checker:
    """The structural invariants, node by node (``validateStructuralInvariants``)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems

    def report(self, path: str, message: str) -> None:
        self.problems.append(f"{path}: {message}")

    def structural(self, node: Any, path: str, level: str) -> None:
        if not isinstance(node, dict):
            self.report(path, "a schema must be an object")
            return
        kind = node.get("type")
        int_or_string = node.get("x-kubernetes-int-or-string") is True
        preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
        embedded = node.get("x-kubernetes-embedded-resource") is True
        if kind == "array" and "items" not in node:
            self.report(path, "an array must have items")
        if "items" in node:
            self.structural(node["items"], _items(path), _ITEM)
        for name, child in _children(node).items():
            self.structural(child, _prop(path, name), _FIELD)
        if "additionalProperties" in node:
            if level == _ROOT:
                self.report(path, "additionalProperties must not be used at the root")
            if isinstance(node["additionalProperties"], dict):
                self.structural(node["additionalProperties"], _items(path), _FIELD)
        if int_or_string and preserve:
            self.report(
                path,
                "x-kubernetes-preserve-unknown-fields must be false if "
                "x-kubernetes-int-or-string is true",
            )
        if int_or_string and embedded:
            self.report(
                path,
                "x-kubernetes-embedded-resource must be false if "
                "x-kubernetes-int-or-string is true",
            )
        self.junctors(node, path, skip_any_of=_is_int_or_string_any_of(node))
        if embedded and kind != "object":
            self.report(path, "an embedded resource must have type object")
        elif not kind and not int_or_string and not preserve:
            where = {_ROOT: "at the root", _ITEM: "for array items", _FIELD: "for object fields"}
            self.report(path, f"type must be set {where[level]}")
        if embedded and "additionalProperties" in node:
            self.report(path, "additionalProperties must not be used in an embedded resource")
        if level == _ROOT and kind and kind != "object":
            self.report(path, "the root must have type object")
        check_meta = level == _ROOT or embedded
        properties = _children(node)
        for name in ("kind", "apiVersion"):
            child = _schema_of(properties.get(name))
            if check_meta and child is not None and child.get("type") != "string":
                self.report(_prop(path, name), "must have type string")
        metadata = _schema_of(properties.get("metadata"))
        if metadata is not None:
            self.metadata(metadata, _prop(path, "metadata"), check_meta, level)
        if embedded and not preserve and not properties:
            self.report(
                path,
                "an embedded resource needs properties or x-kubernetes-preserve-unknown-fields",
            )

    def metadata(self, node: Schema, path: str, check_meta: bool, level: str) -> None:
        if check_meta and node.get("type") != "object":
            self.report(path, "metadata must have type object")
        if level != _ROOT:
            return
        # Only a restriction of name and generateName is allowed; their schemas are not
        # looked at here. type and default are checked elsewhere.
        names = set(_children(node))
        rest = set(_set_keywords(node)) - {"type", "default"}
        if names <= {"name", "generateName"}:
            rest.discard("properties")
        if rest:
            self.report(
                path,
                f"must not specify anything other than name and generateName, found {sorted(rest)}",
            )

    def junctors(self, node: Schema, path: str, *, skip_any_of: bool) -> None:
        """``validateValueValidation``: every junctor branch, at any depth, and the pattern."""
        skip_first_all_of_any_of = _is_int_or_string_all_of(node)
        if not skip_any_of:
            for index, branch in enumerate(_branches(node, "anyOf")):
                self.nested(branch, f"{path}(anyOf[{index}])", skip_any_of=False)
        for index, branch in enumerate(_branches(node, "allOf")):
            self.nested(
                branch,
                f"{path}(allOf[{index}])",
                skip_any_of=skip_first_all_of_any_of and index == 0,
            )
        for index, branch in enumerate(_branches(node, "oneOf")):
            self.nested(branch, f"{path}(oneOf[{index}])", skip_any_of=False)
        if "not" in node:
            self.nested(node["not"], f"{path}(not)", skip_any_of=False)
        pattern = node.get("pattern")
        if isinstance(pattern, str) and pattern:
            problem = re2_problem(pattern, python=False)
            if problem is not None:
                self.report(path, problem)

    def nested(self, node: Any, path: str, *, skip_any_of: bool) -> None:
        """``validateNestedValueValidation``: a junctor branch may only hold value validations."""
        if not isinstance(node, dict):
            self.report(path, "a schema must be an object")
            return
        self.junctors(node, path, skip_any_of=skip_any_of)
        if "items" in node:
            self.nested(node["items"], _items(path), skip_any_of=False)
        for name, child in _children(node).items():
            self.nested(child, _prop(path, name), skip_any_of=False)
        additional = node.get("additionalProperties")
        # additionalProperties: false sets nothing in a nested schema, so only a schema or
        # true is refused
        if additional is not None and additional is not False:
            self.report(path, "additionalProperties must be undefined inside allOf/anyOf/oneOf/not")
        for key, rule in _NESTED_FORBIDDEN:
            if _is_set(node.get(key)):
                self.report(path, f"{key} {rule} inside allOf/anyOf/oneOf/not")
        if "metadata" in _children(node):
            self.report(
                _prop(path, "metadata"), "must not be specified inside allOf/anyOf/oneOf/not"
            )


def _is_set(value: Any) -> bool:
    """Whether a keyword holds more than its Go zero value (what the apiserver compares)."""
    return value is not None and value is not False and value != "" and value != []


def _branches(node: Schema, junctor: str) -> list[Any]:
    branches = node.get(junctor)
    return branches if isinstance(branches, list) else []


def _is_int_or_string_any_of(node: Schema) -> bool:
    branches = node.get("anyOf")
    if not isinstance(branches, list) or not all(isinstance(b, dict) for b in branches):
        return False
    # compared as the apiserver does, where keywords at their zero value count as unset
    return [_set_keywords(b) for b in branches] == _INT_OR_STRING_ANY_OF


def _set_keywords(node: Schema) -> Schema:
    return {key: value for key, value in node.items() if _is_set(value)}


def _is_int_or_string_all_of(node: Schema) -> bool:
    all_of = _branches(node, "allOf")
    return bool(all_of) and isinstance(all_of[0], dict) and _is_int_or_string_any_of(all_of[0])


def _check_completeness(schema: Schema, problems: list[str]) -> None:
    """Every field a root junctor constrains must exist in the structural schema.

    Like ``validateStructuralCompleteness`` this starts from the root's junctors only: the
    apiserver does not look for junctors deeper down that name undeclared fields.
    """

    def value(branch: Schema, node: Schema | None, where: str, via: str) -> None:
        for junctor in _JUNCTORS:
            for index, child in enumerate(_branches(branch, junctor)):
                nested(child, node, where, f"{via}({junctor}[{index}])")
        if "not" in branch:
            nested(branch["not"], node, where, f"{via}(not)")

    def nested(branch: Any, node: Schema | None, where: str, via: str) -> None:
        if not isinstance(branch, dict):
            return
        if node is None:
            problems.append(f"{where}: must be specified because {via} constrains it")
            return
        value(branch, node, where, via)
        if "items" in branch:
            nested(branch["items"], _schema_of(node.get("items")), _items(where), _items(via))
        for name, child in _children(branch).items():
            target = _schema_of(_children(node).get(name))
            nested(child, target, _prop(where, name), _prop(via, name))

    value(schema, schema, ".", "")


class _Context:
    """What ``ValidateCustomResourceDefinitionOpenAPISchema`` carries down the tree."""

    def __init__(
        self,
        *,
        root: bool = False,
        no_defaults: str | None = None,
        in_meta: bool = False,
    ) -> None:
        self.root = root
        self.no_defaults = no_defaults
        self.in_meta = in_meta


def _check_schema(node: Any, path: str, problems: list[str], context: _Context) -> None:
    """The CRD schema rules the apiserver applies to every node, junctor branches included."""
    if not isinstance(node, dict):
        return
    for key in node:
        if key in _FORBIDDEN:
            problems.append(f"{path}: {_FORBIDDEN[key]}")
        elif key not in _ALLOWED:
            problems.append(f"{path}: unknown keyword {key!r}")
    kind = node.get("type")
    if kind == "null":
        problems.append(f"{path}: type cannot be null, use nullable")
    elif kind and kind not in _TYPES:
        problems.append(f"{path}: unknown type {kind!r}")
    if "default" in node and context.no_defaults is not None:
        problems.append(f"{path}: default must not be set {context.no_defaults}")
    if node.get("uniqueItems") is True:
        problems.append(f"{path}: uniqueItems is not allowed (use x-kubernetes-list-type: set)")
    if isinstance(node.get("items"), list):
        problems.append(f"{path}: items must be a schema object and not an array")
    if context.in_meta and node.get("x-kubernetes-embedded-resource") is True:
        problems.append(f"{path}: x-kubernetes-embedded-resource must not be used inside metadata")
    additional = node.get("additionalProperties")
    if additional is not None and _children(node) and additional is not True:
        problems.append(f"{path}: properties and additionalProperties are mutually exclusive")
    if isinstance(additional, dict):
        sub = context
        if context.in_meta:
            sub = _Context(no_defaults="inside additionalProperties of metadata", in_meta=True)
        _check_schema(additional, _items(path), problems, sub)
    embedded = node.get("x-kubernetes-embedded-resource") is True
    for name, child in _children(node).items():
        sub = _Context(no_defaults=context.no_defaults, in_meta=context.in_meta)
        if (context.root or embedded) and name in _META_FIELDS:
            sub.in_meta = True
            if context.root:
                sub.no_defaults = f"in top-level {name}"
        _check_schema(child, _prop(path, name), problems, sub)
    branch_context = _Context(no_defaults=context.no_defaults, in_meta=context.in_meta)
    if "not" in node:
        _check_schema(node["not"], f"{path}(not)", problems, branch_context)
    for junctor in _JUNCTORS:
        for index, child in enumerate(_branches(node, junctor)):
            _check_schema(child, f"{path}({junctor}[{index}])", problems, branch_context)
    if isinstance(node.get("items"), dict):
        sub = _Context(no_defaults=context.no_defaults, in_meta=context.in_meta)
        _check_schema(node["items"], _items(path), problems, sub)
    if node.get("x-kubernetes-preserve-unknown-fields") is False:
        problems.append(f"{path}: x-kubernetes-preserve-unknown-fields must be true or undefined")
    _check_list_and_map_types(node, path, problems)
    _check_rules(node, path, problems)
    _check_default(node, path, problems, context)


def _check_default(node: Schema, path: str, problems: list[str], context: _Context) -> None:
    """A default must be valid for, and survive pruning by, its own schema."""
    if "default" not in node or context.no_defaults is not None or "(" in path:
        return  # a default inside a junctor is already refused as not structural
    if node["default"] is None:
        if not node.get("nullable"):
            problems.append(f"{path}: a null default needs nullable: true")
        return
    # the apiserver validates the root's default as a whole embedded object
    schema = {**node, "x-kubernetes-embedded-resource": True} if context.root else node
    problem = value_problem(node["default"], schema, path)
    if problem is not None:
        problems.append(f"{path}: default is invalid: {problem}")


def _check_list_and_map_types(node: Schema, path: str, problems: list[str]) -> None:
    kind = node.get("type")
    map_type = node.get("x-kubernetes-map-type")
    if map_type is not None:
        if kind != "object":
            problems.append(f"{path}: x-kubernetes-map-type needs type object")
        if map_type not in ("atomic", "granular"):
            problems.append(f"{path}: x-kubernetes-map-type must be atomic or granular")
    list_type = node.get("x-kubernetes-list-type")
    items = _schema_of(node.get("items"))
    if list_type is not None and kind != "array":
        problems.append(f"{path}: x-kubernetes-list-type needs type array")
    elif list_type == "set" and items is not None:
        # scalars are fine; lists and maps must be atomic (their default is not)
        item_list = items.get("x-kubernetes-list-type")
        if items.get("type") == "array" and item_list is not None and item_list != "atomic":
            problems.append(f"{path}[*]: items of a set must be atomic lists")
        if items.get("type") == "object" and items.get("x-kubernetes-map-type") != "atomic":
            problems.append(f"{path}[*]: items of a set must be atomic maps")
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        problems.append(f"{path}: x-kubernetes-list-type must be atomic, set or map")
    keys = node.get("x-kubernetes-list-map-keys")
    if keys and list_type != "map":
        problems.append(f"{path}: x-kubernetes-list-map-keys needs x-kubernetes-list-type: map")
    if list_type == "map":
        if not keys:
            problems.append(f"{path}: a map list needs x-kubernetes-list-map-keys")
        if items is None:
            problems.append(f"{path}: a map list needs an items schema")
        elif items.get("type") != "object":
            problems.append(f"{path}: items of a map list must be objects")
        else:
            properties = _children(items)
            for index, key in enumerate(keys or []):
                prop = _schema_of(properties.get(key))
                if prop is None:
                    problems.append(f"{path}: list map key {key!r} is not a property of the items")
                elif prop.get("type") in ("array", "object"):
                    problems.append(f"{path}: list map key {key!r} must be a scalar")
                if key in (keys or [])[:index]:
                    problems.append(f"{path}: list map key {key!r} is listed twice")
    if list_type in ("set", "map") and items is not None:
        if items.get("nullable") is True:
            problems.append(f"{path}[*]: items of a {list_type} list must not be nullable")
        if list_type == "map":
            required = set(items.get("required") or [])
            for key in keys or []:
                prop = _schema_of(_children(items).get(key))
                if prop is None:
                    continue
                if key not in required and "default" not in prop:
                    problems.append(f"{path}: list map key {key!r} must be required or defaulted")
                if prop.get("nullable") is True:
                    problems.append(f"{path}: list map key {key!r} must not be nullable")


def _check_rules(node: Schema, path: str, problems: list[str]) -> None:
    rules = node.get("x-kubernetes-validations")
    for index, rule in enumerate(rules if isinstance(rules, list) else []):
        where = f"{path}: x-kubernetes-validations[{index}]"
        if not isinstance(rule, dict):
            problems.append(f"{where}: must be an object")
            continue
        text = str(rule.get("rule", "")).strip()
        message = str(rule.get("message", ""))
        if not text:
            problems.append(f"{where}: rule must be a non-empty string")
        elif message and not message.strip():
            problems.append(f"{where}: message must be non-empty if set")
        elif _has_newlines(message.strip()):
            problems.append(f"{where}: message must be one line")
        elif _has_newlines(text) and not message.strip():
            problems.append(f"{where}: a rule with line breaks needs a message")
        expression = str(rule.get("messageExpression", ""))
        if expression and not expression.strip():
            problems.append(f"{where}: messageExpression must be non-empty if set")
        if rule.get("reason") is not None and rule["reason"] not in _REASONS:
            problems.append(f"{where}: reason must be one of {sorted(_REASONS)}")
        field_path = rule.get("fieldPath")
        if field_path:
            if not str(field_path).strip() or _has_newlines(str(field_path)):
                problems.append(f"{where}: fieldPath must be one non-blank line")
            else:
                problem = _field_path_problem(str(field_path), node)
                if problem is not None:
                    problems.append(f"{where}: fieldPath {field_path!r} {problem}")
        if rule.get("optionalOldSelf") is not None and text and not _OLD_SELF.search(text):
            problems.append(f"{where}: optionalOldSelf may only be set if the rule uses oldSelf")
        unknown = set(rule) - {
            "rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"
        }  # fmt: skip
        if unknown:
            problems.append(f"{where}: unknown keys {sorted(unknown)}")


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
            "'": "'", "\\": "\\"}  # fmt: skip


def _path_tokens(text: str) -> list[str]:
    """``.a['b.c']`` as ``['.', 'a', '[', "'b.c'", ']']``: a quoted name is one token."""
    tokens: list[str] = []
    index = 0
    while index < len(text):
        if text[index] in ".[]":
            tokens.append(text[index])
            index += 1
        elif text[index] == "'":
            end = index + 1
            while end < len(text) and not (text[end] == "'" and text[end - 1] != "\\"):
                end += 1
            tokens.append(text[index : end + 1])
            index = end + 1
        else:
            end = index
            while end < len(text) and text[end] not in ".[]":
                end += 1
            tokens.append(text[index:end])
            index = end
    return tokens


def _unquote(token: str) -> str | None:
    out: list[str] = []
    body = iter(token[1:-1])
    for char in body:
        if char == "\\":
            escaped = _ESCAPES.get(next(body, ""))
            if escaped is None:
                return None
            out.append(escaped)
        else:
            out.append(char)
    return "".join(out)


def _field_path_problem(text: str, schema: Schema) -> str | None:
    """Why a rule's ``fieldPath`` does not name a field below ``schema`` (None when it does).

    Steps are ``.name`` or ``['name']``; each goes to a declared property, or, where the
    object has none, through additionalProperties.
    """
    tokens = iter(_path_tokens(text))
    node: Schema | None = schema
    for token in tokens:
        if token == ".":
            name: str | None = next(tokens, None)
        elif token == "[":
            quoted = next(tokens, None)
            if quoted is None or len(quoted) < 2 or quoted[0] != "'" or quoted[-1] != "'":
                return "must quote the name between [ and ]"
            name = _unquote(quoted)
            if name is None:
                return "has an invalid escape"
            if next(tokens, None) != "]":
                return "must close [ with ]"
        else:
            return f"must step with . or [ but has {token!r}"
        if name is None:
            return "ends unexpectedly"
        properties = _children(node) if node is not None else {}
        if properties:
            node = _schema_of(properties.get(name))
            if node is None:
                return "does not refer to a valid field"
        elif node is not None and "additionalProperties" in node:
            node = _schema_of(node["additionalProperties"])
        else:
            return "does not refer to a valid field"
    return None


def _has_newlines(text: str) -> bool:
    return "\n" in text or "\r" in text


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
        if "pattern" in schema and not _matches(schema["pattern"], value):
            return f"{path}: does not match {schema['pattern']!r}"
        check = _DEFAULT_FORMAT_CHECKS.get(str(schema.get("format")))
        if check is not None and not check(value):
            return f"{path}: {value!r} is not of format {schema['format']}"
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
        if schema.get("x-kubernetes-embedded-resource") is True:
            missing = [key for key in ("apiVersion", "kind") if not value.get(key)]
            if missing:
                return f"{path}: an embedded resource needs {' and '.join(missing)}"
        return _object_problem(value, schema, path)
    return None


# A loose RFC 3339 shape: the apiserver's parser takes several layouts, so only a value with
# no date-time shape at all is refused offline.
_DATE_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?)?"
)
_DEFAULT_FORMAT_CHECKS: dict[str, Callable[[str], bool]] = {
    **FORMAT_CHECKS,
    "date-time": lambda value: _DATE_TIME.fullmatch(value) is not None,
    "datetime": lambda value: _DATE_TIME.fullmatch(value) is not None,
}


def _matches(pattern: str, value: str) -> bool:
    try:
        return re.search(pattern, value) is not None
    except re.error:
        # RE2 syntax Python cannot run (such as (?i) after the start): not decided offline
        return True


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
