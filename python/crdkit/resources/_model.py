"""The pydantic base classes and timestamp types every resource model is built from.

Kubernetes JSON is camelCase; Python attributes are snake_case. ``ApiModel`` maps one to the
other and accepts both spellings on input, so objects built in code and objects read from the
apiserver look the same. ``OpenModel`` additionally keeps fields it does not declare: the
built-in kinds model only what operators commonly read, and a read-modify-write round trip
must not drop the rest (newer API fields, fields crdkit does not model).
"""

from __future__ import annotations

import types
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Protocol, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    PlainSerializer,
    model_validator,
)
from pydantic_core import core_schema

from crdkit.resources._wire_checks import apply_wire_checks, check_variant_fields
from crdkit.resources.durations import duration_core_schema, is_duration_core_schema
from crdkit.resources.naming import camel_case
from crdkit.resources.scalars import bytes_core_schema, is_bytes_core_schema

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler, SerializerFunctionWrapHandler
    from pydantic.fields import FieldInfo
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import CoreSchema
    from pydantic_core.core_schema import SerializationInfo

__all__ = ["ApiModel", "MicroTime", "OpenModel", "Time", "TypeRule"]


class TypeRule(Protocol):
    """A rule on a whole type (``crdkit.crd.XValidation`` is one): its CEL form and an
    optional Python predicate with the same meaning."""

    @property
    def check(self) -> Callable[[Any], bool] | None: ...

    @property
    def message(self) -> str | None: ...

    @property
    def rule(self) -> str: ...

    def to_schema(self) -> dict[str, Any]: ...


def _use_kubernetes_wire_forms(
    schema: Any, owner: type, resolve: Callable[[Any], Any], seen: set[str]
) -> None:
    """Give the fields of an ApiModel the apiserver's reading of JSON, in place.

    The apiserver's ``date-time`` format refuses a time without an offset, and its
    ``duration`` format refuses ISO 8601: so a ``datetime`` must be timezone-aware and a
    ``timedelta`` is a Go duration (``Duration``). ``bytes`` is base64 (``Bytes``), as the
    apiserver's ``byte`` format wants. Scalars are as strict as the CRD's types, and nulls
    read as the apiserver stores them (``apply_wire_checks``). Fields of plain pydantic
    models nested inside are left as pydantic makes them.

    A type defined once for several uses (an enum) is a ``definition-ref`` here: ``resolve``
    finds its schema, rewritten once (``seen`` holds the refs done, and breaks recursion).
    """
    if isinstance(schema, list):
        for item in schema:
            _use_kubernetes_wire_forms(item, owner, resolve, seen)
        return
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    if kind == "model" and not _is_api_model(schema.get("cls"), owner):
        return
    if kind == "definition-ref":
        ref = schema["schema_ref"]
        if ref in seen:
            return
        seen.add(ref)
        try:
            target = resolve(schema)
        except LookupError:  # a model still being defined: it is rewritten by its own hook
            return
        _use_kubernetes_wire_forms(target, owner, resolve, seen)
        return
    if kind == "datetime":
        schema.setdefault("tz_constraint", "aware")
    if kind == "timedelta":
        inner = dict(schema)
        schema.clear()
        schema.update(duration_core_schema(inner))
        return
    if kind == "bytes":  # []byte: base64 on the wire (``Bytes``)
        inner = dict(schema)
        schema.clear()
        schema.update(bytes_core_schema(inner))
        return
    if is_duration_core_schema(schema) or is_bytes_core_schema(schema):
        return
    # A dict without a string "type" is a mapping of names (a model's fields), not a node.
    node = isinstance(kind, str)
    if node and apply_wire_checks(schema):
        return
    if kind in ("union", "tagged-union"):
        check_variant_fields(schema, resolve)
    for key, value in schema.items():
        if not (node and key in _NOT_SCHEMAS):
            _use_kubernetes_wire_forms(value, owner, resolve, seen)


# Keys of a core schema node that hold data, not schemas: a default of ``{"type": "int"}``
# must not be rewritten.
_NOT_SCHEMAS = frozenset({"default", "metadata", "expected", "members", "cls", "config"})


def _is_api_model(cls: Any, owner: type) -> bool:
    return cls is owner or (isinstance(cls, type) and issubclass(cls, ApiModel))


def _admits_none(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _admits_none(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return any(arg is type(None) or _admits_none(arg) for arg in get_args(annotation))
    return False


def _absent_is_not_none(field: FieldInfo) -> bool:
    """A field that may hold None but reads an absent key as something else.

    Required (pydantic refuses the document without the key), or defaulting to a value other
    than None. Its CRD schema is ``nullable`` (``crdkit.crd.schema``) so the apiserver keeps
    the null.
    """
    return _admits_none(field.annotation) and field.default is not None


def _keep_meaningful_nulls(schema: Any, cls: type[BaseModel]) -> None:
    """Make ``exclude_none`` keep the None of fields where absent would mean something else.

    crdkit writes objects with ``exclude_none`` (``to_dict``, ``to_json``, ``to_apply``, the
    client's codec): None and absent are the same on the wire. Not for a required
    ``x: int | None``: leaving it out gives a document pydantic (and the CRD) refuses, and for
    ``x: int | None = 5`` the apiserver would fill in 5. Those fields are written as null.
    Only classes that have such fields get the extra serialiser step.
    """
    fields = getattr(cls, "__pydantic_fields__", None) or {}
    kept = tuple(
        (name, field.serialization_alias or field.alias or name)
        for name, field in fields.items()
        if _absent_is_not_none(field)
    )
    if not kept:
        return
    target = schema
    if target.get("type") == "definitions":
        target = target["schema"]
    if target.get("type") != "model" or target.get("cls") is not cls:
        return
    if "serialization" in target:
        return  # the class has its own model_serializer, which decides

    def serialize(
        value: Any, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        data = handler(value)
        if not info.exclude_none or not isinstance(data, dict):
            return data
        for name, alias in kept:
            key = alias if info.by_alias else name
            if key in data or getattr(value, name, 0) is not None:
                continue
            if info.exclude is not None and name in info.exclude:
                continue  # left out on purpose
            if info.include is not None and name not in info.include:
                continue
            if info.exclude_unset and name not in value.model_fields_set:
                continue
            data[key] = None
        return data

    target["serialization"] = core_schema.wrap_serializer_function_ser_schema(
        serialize, info_arg=True
    )


class ApiModel(BaseModel):
    """camelCase on the wire, snake_case in Python, both accepted on input.

    JSON names follow Kubernetes' spelling of acronyms (``cluster_ip`` → ``clusterIP``,
    ``crdkit.resources.naming``); an explicit ``Field(alias=...)`` wins.

    Use it as the base of ``spec``/``status`` models of custom resources. Undeclared fields
    are ignored, as the apiserver prunes them from custom resources anyway.

    Rules on the whole type (controller-gen's type-level ``XValidation``) are a class keyword:
    ``class Range(ApiModel, validations=[XValidation("self.min <= self.max")])``. They go into
    the type's schema and, when they carry a Python ``check``, are enforced by pydantic too.
    """

    model_config = ConfigDict(alias_generator=camel_case, populate_by_name=True)

    __crd_validations__: ClassVar[tuple[TypeRule, ...]] = ()

    def __init_subclass__(
        cls, *, validations: Iterable[TypeRule] | None = None, **kwargs: Any
    ) -> None:
        super().__init_subclass__(**kwargs)
        if validations is None:
            return
        own = tuple(validations)
        cls.__crd_validations__ = (*cls.__crd_validations__, *own)
        checks = [rule for rule in own if rule.check is not None]
        if not checks:
            return

        def _check_type_rules(self: Any) -> Any:
            for rule in checks:
                assert rule.check is not None
                if not rule.check(self):
                    raise ValueError(rule.message or f"failed rule: {rule.rule}")
            return self

        # Set before pydantic collects validators (that happens after __init_subclass__).
        cls._crd_type_rules = model_validator(mode="after")(_check_type_rules)  # type: ignore[attr-defined]

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        schema = handler(source)
        _use_kubernetes_wire_forms(schema, cls, handler.resolve_ref_schema, set())
        _keep_meaningful_nulls(schema, cls)
        return schema

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(schema)
        if cls.__crd_validations__:
            target = handler.resolve_ref_schema(json_schema)
            target["x-kubernetes-validations"] = [
                *target.get("x-kubernetes-validations", []),
                *(rule.to_schema() for rule in cls.__crd_validations__),
            ]
        return json_schema


class OpenModel(ApiModel):
    """An ``ApiModel`` that keeps undeclared fields, so a round trip through it loses nothing."""

    model_config = ConfigDict(extra="allow")


def _to_utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


def _format_time(value: datetime) -> str:
    # isoformat, not strftime: strftime does not pad years before 1000 to four digits.
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def _format_micro_time(value: datetime) -> str:
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


Time = Annotated[
    AwareDatetime,
    AfterValidator(_to_utc),
    PlainSerializer(_format_time, return_type=str, when_used="json"),
]
"""``metav1.Time``: RFC 3339 in UTC with whole seconds, as the apiserver writes it.

Naive datetimes are refused: a timestamp without a zone is ambiguous on a cluster.
"""

MicroTime = Annotated[
    AwareDatetime,
    AfterValidator(_to_utc),
    PlainSerializer(_format_micro_time, return_type=str, when_used="json"),
]
"""``metav1.MicroTime``: RFC 3339 in UTC with exactly six fractional digits.

The apiserver parses MicroTime with a fixed six-digit layout, so the digits are always written.
"""

RawObject = dict[str, Any]
"""A JSON object kept as data (``managedFields``, ``affinity``): rarely read, or typed elsewhere."""
