"""Scalar field types that accept exactly what the apiserver accepts for their CRD schema.

Each type pairs a pydantic validator with the schema ``crdkit.crd`` writes for it, and the
validator follows what the apiserver was observed to do (``tests/integration/crd``):

* ``Int32``/``Int64``: ``type: integer`` with ``format: int32``/``int64``. The apiserver refuses
  integers outside the format's range ("must be of type integer with format int32"), and any
  integer beyond int64 (it decodes those as floats). Whole-number floats such as ``4.0`` are
  integers to it, as they are to pydantic.
* ``Bytes``: ``type: string, format: byte``: standard base64 with padding (``+/``, no URL-safe
  alphabet, no whitespace or newlines, at least one 4-character group: ``""`` is refused).
  Python holds the decoded ``bytes``; JSON carries the base64 text.
* ``quantity_text`` (``crdkit.resources.Quantity``): an integer in int64, a whole-number float
  within ±(2**53 - 1), or a string matching ``QUANTITY_PATTERN`` (the pattern controller-gen
  writes for ``resource.Quantity``); bools, fractional floats and larger numbers are refused.
"""

from __future__ import annotations

import base64
import re
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, TypeAdapter, WithJsonSchema

if TYPE_CHECKING:
    from pydantic import GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import CoreSchema

__all__ = [
    "BYTES_KEY",
    "INTEGER_FORMAT_RANGES",
    "QUANTITY_PATTERN",
    "Bytes",
    "Int32",
    "Int64",
    "bytes_core_schema",
    "integer_format_problem",
    "is_base64",
    "is_bytes_core_schema",
    "quantity_text",
]

BYTES_KEY = "x-crdkit-base64"
INTEGER_FORMAT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
# The largest whole-number float the apiserver takes for an integer: 2**53 (and beyond) is
# refused as a "number", whatever its value.
_JSON_FLOAT_INTEGER = 2**53 - 1

QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_QUANTITY = re.compile(QUANTITY_PATTERN)
# go-openapi strfmt's "byte" check (govalidator.IsBase64), which the apiserver runs.
_BASE64 = re.compile(
    r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})"
)


def is_base64(text: str) -> bool:
    """Whether the apiserver's ``byte`` format accepts ``text``."""
    return _BASE64.fullmatch(text) is not None


def integer_format_problem(value: int, name: str) -> str | None:
    """Why an integer is out of the range of ``format: <name>``, or ``None``."""
    low, high = INTEGER_FORMAT_RANGES[name]
    if low <= value <= high:
        return None
    return f"{value} is outside the {name} range [{low}, {high}]"


def _in_range(name: str) -> Any:
    def check(value: Any) -> Any:
        # Before pydantic's int validation, which in lax mode would take "5" and True: the
        # apiserver refuses both for an integer. A whole float is an integer to both.
        if isinstance(value, str | bytes | bool):
            raise ValueError(f"{value!r} is not an integer: {name} takes a JSON number")
        number = value
        if isinstance(value, float) and value.is_integer():
            if abs(value) > _JSON_FLOAT_INTEGER:
                raise ValueError(f"{value!r} is too large a float to be sent as an integer")
            number = int(value)
        if isinstance(number, int) and not isinstance(number, bool):
            problem = integer_format_problem(number, name)
            if problem is not None:
                raise ValueError(problem)
        return value

    return check


class _IntegerFormat:
    """Adds ``format`` to the integer schema pydantic makes, keeping its bounds
    (``Field(ge=0)``), which a whole replacement schema would silently drop."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(schema)
        handler.resolve_ref_schema(json_schema)["format"] = self.name
        return json_schema


Int32 = Annotated[int, BeforeValidator(_in_range("int32")), _IntegerFormat("int32")]
"""An ``int32`` (``format: int32``): values beyond ±2**31 are refused, as the apiserver does."""

Int64 = Annotated[int, BeforeValidator(_in_range("int64")), _IntegerFormat("int64")]
"""An ``int64`` (``format: int64``): values beyond ±2**63 are refused, as the apiserver does."""


def _from_base64(value: Any) -> Any:
    if isinstance(value, str):
        if not is_base64(value):
            raise ValueError(
                f"{value[:40]!r} is not standard padded base64 (A-Z a-z 0-9 + /, '=' padding, "
                "no whitespace, not empty), which the apiserver's byte format requires"
            )
        return base64.b64decode(value)
    if isinstance(value, bytes | bytearray | memoryview):
        if not value:
            # b"" would be written as "", which the apiserver's byte format refuses.
            raise ValueError("an empty byte string cannot be stored: its base64 form '' is refused")
        return bytes(value)
    return value  # pydantic's bytes validation refuses it with its own message


def _to_base64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


Bytes = Annotated[
    bytes,
    BeforeValidator(_from_base64),
    PlainSerializer(_to_base64, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "byte", BYTES_KEY: True}),
]
"""``[]byte``: decoded ``bytes`` in Python, standard base64 on the wire (``format: byte``).

A ``str`` input is base64 text (as read from the apiserver); ``bytes`` input is the data itself.
"""

_BYTES_CORE_SCHEMA: dict[str, Any] = dict(TypeAdapter(Bytes).core_schema)


def bytes_core_schema(bytes_schema: dict[str, Any]) -> CoreSchema:
    """``Bytes``' validation and serialisation around a (plain) bytes core schema."""
    if "min_length" in bytes_schema or "max_length" in bytes_schema:
        # The CRD could only bound the base64 text, not the decoded bytes pydantic bounds.
        raise TypeError(
            "length bounds on a bytes field have no CRD form (the apiserver would count "
            "base64 characters); check the length in a CEL rule instead"
        )
    return {**_BYTES_CORE_SCHEMA, "schema": bytes_schema}


def is_bytes_core_schema(schema: dict[str, Any]) -> bool:
    """Whether a core schema node already is ``Bytes``'."""
    function = schema.get("function")
    return isinstance(function, dict) and function.get("function") is _from_base64


def quantity_text(value: Any) -> Any:
    """A quantity as text, accepting exactly what the CRD's int-or-string + pattern accepts."""
    if isinstance(value, bool):
        return value  # str validation refuses it with pydantic's message
    if isinstance(value, int):
        problem = integer_format_problem(value, "int64")
        if problem is not None:
            raise ValueError(f"a quantity number must fit int64: {problem}")
        return str(value)
    if isinstance(value, float):
        if not value.is_integer() or abs(value) > _JSON_FLOAT_INTEGER:
            raise ValueError(
                f"{value!r} is not a quantity: a number must be whole (and below 2**53), "
                "write fractions as a string such as '1.5' or '1500m'"
            )
        return str(int(value))
    if isinstance(value, str) and _QUANTITY.fullmatch(value) is None:
        raise ValueError(
            f"{value[:40]!r} is not a quantity such as '500m', '64Gi', '1.5' or '2e3' "
            "(no spaces; suffixes Ki Mi Gi Ti Pi Ei, n u m k M G T P E)"
        )
    return value
