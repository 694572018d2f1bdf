"""Field and type markers: controller-gen's ``+kubebuilder`` markers as ``Annotated`` metadata.

Each marker does two things, so that pydantic and the apiserver agree on what is valid:

* it adds keywords to the field's JSON schema (``__get_pydantic_json_schema__``), which
  ``crdkit.crd.schema`` turns into the CRD's structural schema;
* where Python can check the same rule, it adds a pydantic validator
  (``__get_pydantic_core_schema__``) so bad objects fail before they reach the apiserver.

Bounds, lengths and patterns are pydantic's own (``Field(ge=..., max_length=..., pattern=...)``
or the aliases below), and ``Literal``/``Enum`` give ``enum``. Markers that only the apiserver
can evaluate (CEL transition rules such as ``immutable()``) add schema only.

Keywords starting with ``x-crdkit-`` are instructions to the converter and never reach a CRD.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import annotated_types
from pydantic_core import core_schema

from crdkit.crd.cel import cel_field
from crdkit.crd.formats import FORMAT_CHECKS, KNOWN_FORMATS
from crdkit.resources.durations import DURATION_KEY
from crdkit.resources.scalars import INTEGER_FORMAT_RANGES, integer_format_problem

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue

__all__ = [
    "AtLeastOneOf",
    "AtMostOneOf",
    "EmbeddedResource",
    "ExactlyOneOf",
    "ExclusiveMaximum",
    "ExclusiveMinimum",
    "Format",
    "ListMapKeys",
    "ListType",
    "MapType",
    "MaxItems",
    "MaxLength",
    "MaxProperties",
    "Maximum",
    "MinItems",
    "MinLength",
    "MinProperties",
    "Minimum",
    "MultipleOf",
    "Nullable",
    "PreserveUnknownFields",
    "Schemaless",
    "XValidation",
    "immutable",
]

SCHEMALESS_KEY = "x-crdkit-schemaless"
VALIDATIONS_KEY = "x-kubernetes-validations"

# controller-gen's numeric, length and size markers are annotated-types constraints, which
# pydantic both enforces and writes into the JSON schema.
Minimum = annotated_types.Ge
Maximum = annotated_types.Le
ExclusiveMinimum = annotated_types.Gt
ExclusiveMaximum = annotated_types.Lt
MultipleOf = annotated_types.MultipleOf
MinLength = annotated_types.MinLen
MaxLength = annotated_types.MaxLen
MinItems = annotated_types.MinLen
MaxItems = annotated_types.MaxLen
MinProperties = annotated_types.MinLen
MaxProperties = annotated_types.MaxLen


class _SchemaMarker:
    """A marker that adds fixed keywords to the schema of what it annotates."""

    def schema_keywords(self) -> dict[str, Any]:
        raise NotImplementedError

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = dict(handler(schema))
        for key, value in self.schema_keywords().items():
            if key == VALIDATIONS_KEY:
                json_schema[key] = [*json_schema.get(key, []), *value]
            else:
                json_schema[key] = value
        return json_schema

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        inner = handler(source)
        check = self.python_check()
        if check is None:
            return inner

        def unless_absent(value: Any) -> Any:
            # None is an absent field to the apiserver, whose rules then do not run either.
            return value if value is None else check(value)

        return core_schema.no_info_after_validator_function(unless_absent, inner)

    def python_check(self) -> Callable[[Any], Any] | None:
        """A validator enforcing the same rule in Python, when Python can."""
        return None


class _FlagMarker(_SchemaMarker):
    """A marker that only switches one schema keyword on: the keyword is its whole meaning."""

    keyword: ClassVar[str]

    def schema_keywords(self) -> dict[str, Any]:
        return {self.keyword: True}


@dataclass(frozen=True)
class XValidation(_SchemaMarker):
    """A CEL rule (``+kubebuilder:validation:XValidation``) on a field or, as a class keyword
    ``validations=[...]`` of an ``ApiModel``, on a type.

    ``check`` is an optional Python predicate with the same meaning as ``rule``; when given,
    pydantic enforces it too, so invalid objects fail before reaching the apiserver.
    """

    rule: str
    message: str | None = None
    message_expression: str | None = None
    reason: (
        Literal[
            "FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"
        ]
        | None
    ) = None
    field_path: str | None = None
    optional_old_self: bool | None = None
    check: Callable[[Any], bool] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.rule.strip():
            raise ValueError("XValidation: rule must not be empty")
        if self.field_path is not None and not self.field_path.startswith("."):
            raise ValueError(
                f"XValidation: field_path must start with '.', got {self.field_path!r}"
            )

    def to_schema(self) -> dict[str, Any]:
        """The ``x-kubernetes-validations`` entry."""
        entry: dict[str, Any] = {"rule": self.rule}
        if self.message is not None:
            entry["message"] = self.message
        if self.message_expression is not None:
            entry["messageExpression"] = self.message_expression
        if self.reason is not None:
            entry["reason"] = self.reason
        if self.field_path is not None:
            entry["fieldPath"] = self.field_path
        if self.optional_old_self is not None:
            entry["optionalOldSelf"] = self.optional_old_self
        return entry

    def schema_keywords(self) -> dict[str, Any]:
        return {VALIDATIONS_KEY: [self.to_schema()]}

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        checked = super().__get_pydantic_core_schema__(source, handler)
        return core_schema.no_info_wrap_validator_function(_no_float_under_a_rule, checked)

    def python_check(self) -> Callable[[Any], Any] | None:
        predicate = self.check
        if predicate is None:
            return None
        failure = self.message or f"failed rule: {self.rule}"

        def run(value: Any) -> Any:
            if not predicate(value):
                raise ValueError(failure)
            return value

        return run


def _no_float_under_a_rule(value: Any, handler: core_schema.ValidatorFunctionWrapHandler) -> Any:
    """Refuse a float the field turns into an integer or text (``4.0`` → ``4``, ``"4"``).

    Without a rule the apiserver takes ``4.0`` for an integer or int-or-string too, but a CEL
    rule on the field refuses it ("expected int, got float64"), so pydantic must as well.
    """
    result = handler(value)
    if isinstance(value, float) and result is not None and not isinstance(result, float):
        raise ValueError(
            f"{value!r} is a float: a field with a CEL rule must be sent a whole number as an "
            f"integer ({int(value) if value.is_integer() else value!r})"
        )
    return result


def _present_count(value: Any, fields: tuple[str, ...]) -> int:
    data = value.model_dump(by_alias=True) if hasattr(value, "model_dump") else dict(value)
    return sum(1 for name in fields if data.get(name) is not None)


def _presence_rule(fields: tuple[str, ...], comparison: str) -> str:
    # A sum of has() conditionals, not [has(...), ...].filter(x, x).size(): the apiserver
    # estimates the list-building spelling at 13x the cost, over its budget for the items
    # of an unbounded list or map (crdkit.crd.budget).
    count = " + ".join(f"(has(self.{cel_field(name)}) ? 1 : 0)" for name in fields)
    return f"{count} {comparison}"


def ExactlyOneOf(*fields: str) -> XValidation:
    """Exactly one of these (JSON-named) fields is set (``+kubebuilder:validation:ExactlyOneOf``).

    A type-level rule: pass it in ``validations=[...]`` of the model.
    """
    if len(fields) < 2:
        raise ValueError("ExactlyOneOf needs at least two fields")
    return XValidation(
        _presence_rule(fields, "== 1"),
        message=f"exactly one of {', '.join(fields)} must be set",
        check=lambda value: _present_count(value, fields) == 1,
    )


def AtMostOneOf(*fields: str) -> XValidation:
    """At most one of these (JSON-named) fields is set (``+kubebuilder:validation:AtMostOneOf``)."""
    if len(fields) < 2:
        raise ValueError("AtMostOneOf needs at least two fields")
    return XValidation(
        _presence_rule(fields, "<= 1"),
        message=f"at most one of {', '.join(fields)} may be set",
        check=lambda value: _present_count(value, fields) <= 1,
    )


def AtLeastOneOf(*fields: str) -> XValidation:
    """At least one of these (JSON-named) fields is set
    (``+kubebuilder:validation:AtLeastOneOf``)."""
    if len(fields) < 2:
        raise ValueError("AtLeastOneOf needs at least two fields")
    return XValidation(
        " || ".join(f"has(self.{cel_field(name)})" for name in fields),
        message=f"at least one of {', '.join(fields)} must be set",
        check=lambda value: _present_count(value, fields) >= 1,
    )


def immutable(message: str = "field is immutable") -> XValidation:
    """A field that cannot change once set: the CEL transition rule ``self == oldSelf``."""
    return XValidation(rule="self == oldSelf", message=message)


@dataclass(frozen=True)
class PreserveUnknownFields(_FlagMarker):
    """Keep fields the schema does not declare (``+kubebuilder:pruning:PreserveUnknownFields``)."""

    keyword = "x-kubernetes-preserve-unknown-fields"


@dataclass(frozen=True)
class Schemaless(_FlagMarker):
    """Store the field unvalidated (``+kubebuilder:validation:Schemaless``).

    The escape hatch for types with no structural form (recursive models, mixed tuples):
    the field's schema becomes "any JSON value, kept as is"; pydantic still validates it.
    """

    keyword = SCHEMALESS_KEY


@dataclass(frozen=True)
class EmbeddedResource(_FlagMarker):
    """A whole Kubernetes object inside this one (``+kubebuilder:validation:EmbeddedResource``).

    The apiserver requires ``apiVersion`` and ``kind`` in it and validates its ``metadata``.
    """

    keyword = "x-kubernetes-embedded-resource"

    def python_check(self) -> Callable[[Any], Any] | None:
        def run(value: Any) -> Any:
            data = value if isinstance(value, Mapping) else getattr(value, "__dict__", {})
            for key, attribute in (("apiVersion", "api_version"), ("kind", "kind")):
                if not (data.get(key) or data.get(attribute)):
                    raise ValueError(f"an embedded resource needs {key}")
            return value

        return run


@dataclass(frozen=True)
class Nullable(_FlagMarker):
    """``null`` is a value to keep, not an absent field (``+nullable``)."""

    keyword = "nullable"


@dataclass(frozen=True)
class ListType(_SchemaMarker):
    """How server-side apply merges a list (``+listType``): atomic, set or map."""

    kind: Literal["atomic", "set", "map"]

    def __post_init__(self) -> None:
        if self.kind not in ("atomic", "set", "map"):
            raise ValueError(f"ListType must be 'atomic', 'set' or 'map', got {self.kind!r}")

    def schema_keywords(self) -> dict[str, Any]:
        return {"x-kubernetes-list-type": self.kind}

    def python_check(self) -> Callable[[Any], Any] | None:
        if self.kind != "set":
            return None
        return _refuse_repeats(lambda item: item, "", "set")


@dataclass(frozen=True)
class ListMapKeys(_SchemaMarker):
    """The keys identifying entries of a ``ListType("map")`` list (``+listMapKey``).

    Names are the JSON (camelCase) names. Entries with equal keys are refused, as the
    apiserver does.
    """

    keys: tuple[str, ...]

    def __init__(self, *keys: str) -> None:
        if not keys:
            raise ValueError("ListMapKeys needs at least one key")
        object.__setattr__(self, "keys", tuple(keys))

    def schema_keywords(self) -> dict[str, Any]:
        return {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": list(self.keys)}

    def python_check(self) -> Callable[[Any], Any] | None:
        keys = self.keys

        def key_of(item: Any) -> tuple[Any, ...]:
            if isinstance(item, Mapping):
                return tuple(item.get(k) for k in keys)
            dumped = item.model_dump(by_alias=True) if hasattr(item, "model_dump") else {}
            return tuple(dumped.get(k) for k in keys)

        return _refuse_repeats(key_of, "with key ", "map")


def _refuse_repeats(
    key_of: Callable[[Any], Any], label: str, list_type: str
) -> Callable[[Any], Any]:
    """A check refusing a list in which two entries have equal keys, as the apiserver refuses
    a ``set`` list with equal items and a ``map`` list with equal map keys.

    The keys seen are kept in a list, not a set: a set list's items may be unhashable (dicts).
    """

    def run(value: Any) -> Any:
        seen: list[Any] = []
        for item in value:
            key = key_of(item)
            if key in seen:
                raise ValueError(f"duplicate entry {label}{key!r} in a list of type {list_type}")
            seen.append(key)
        return value

    return run


@dataclass(frozen=True)
class MapType(_SchemaMarker):
    """How server-side apply merges a map or struct (``+mapType``): atomic or granular."""

    kind: Literal["atomic", "granular"]

    def __post_init__(self) -> None:
        if self.kind not in ("atomic", "granular"):
            raise ValueError(f"MapType must be 'atomic' or 'granular', got {self.kind!r}")

    def schema_keywords(self) -> dict[str, Any]:
        return {"x-kubernetes-map-type": self.kind}


@dataclass(frozen=True)
class Format(_SchemaMarker):
    """A string format the apiserver checks (``+kubebuilder:validation:Format``).

    hostname, ipv4, ipv6, cidr, uuid, mac, byte and duration are checked in Python too, and
    so is the range of ``int32``/``int64`` on an integer (the apiserver refuses values beyond
    it); ``crdkit.resources.Int32``/``Int64`` are the same as types.
    """

    name: str

    def __post_init__(self) -> None:
        if self.name not in KNOWN_FORMATS:
            raise ValueError(
                f"Format {self.name!r} is not one the apiserver knows: {sorted(KNOWN_FORMATS)}"
            )

    def schema_keywords(self) -> dict[str, Any]:
        if self.name == "duration":
            # Text checked as the apiserver checks it (FORMAT_CHECKS), not a timedelta
            # written as ISO 8601, which the converter refuses.
            return {"format": self.name, DURATION_KEY: True}
        return {"format": self.name}

    def python_check(self) -> Callable[[Any], Any] | None:
        name = self.name
        if name in INTEGER_FORMAT_RANGES:

            def in_range(value: Any) -> Any:
                if isinstance(value, int) and not isinstance(value, bool):
                    problem = integer_format_problem(value, name)
                    if problem is not None:
                        raise ValueError(problem)
                return value

            return in_range
        check = FORMAT_CHECKS.get(name)
        if check is None:
            return None

        def run(value: Any) -> Any:
            if isinstance(value, str) and not check(value):
                raise ValueError(f"{value!r} is not a valid {name}")
            return value

        return run
