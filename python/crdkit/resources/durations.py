"""Field types whose Kubernetes wire form differs from pydantic's default.

``Duration`` is a ``timedelta`` written as a Go duration string (``"1h30m0s"``), the form
Kubernetes APIs use (``metav1.Duration``); pydantic's default would be ISO 8601 (``PT1H30M``),
which the apiserver's ``duration`` format refuses. ``ApiModel`` gives every plain ``timedelta``
field this form. ``IntOrString`` is ``intstr.IntOrString``: a port number or name, a replica
count or percentage.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, StrictInt, TypeAdapter, WithJsonSchema

if TYPE_CHECKING:
    from pydantic_core import CoreSchema

__all__ = [
    "DURATION_KEY",
    "Duration",
    "IntOrString",
    "duration_core_schema",
    "format_duration",
    "is_duration_core_schema",
    "parse_duration",
]

DURATION_KEY = "x-crdkit-go-duration"

_UNIT_MICROSECONDS = {
    "ns": 0.001,
    "us": 1.0,  # Go accepts three spellings of micro
    "µs": 1.0,
    "μs": 1.0,
    "ms": 1000.0,
    "s": 1_000_000.0,
    "m": 60_000_000.0,
    "h": 3_600_000_000.0,
}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION = re.compile(r"[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+|[-+]?0")


def parse_duration(text: str) -> timedelta:
    """A Go duration string (``time.ParseDuration`` syntax) as a ``timedelta``."""
    if not _DURATION.fullmatch(text):
        raise ValueError(f"{text!r} is not a duration such as '90s', '1h30m' or '250ms'")
    sign = -1 if text.startswith("-") else 1
    micros = sum(float(n) * _UNIT_MICROSECONDS[unit] for n, unit in _PART.findall(text))
    return timedelta(microseconds=sign * round(micros))


def format_duration(value: timedelta) -> str:
    """A ``timedelta`` as Go writes durations: ``1h30m0s``, ``1.5s``, ``0s``."""
    micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    if micros == 0:
        return "0s"
    sign = "-" if micros < 0 else ""
    micros = abs(micros)
    hours, rest = divmod(micros, 3_600_000_000)
    minutes, rest = divmod(rest, 60_000_000)
    seconds, fraction = divmod(rest, 1_000_000)
    text = f"{seconds}.{fraction:06d}".rstrip("0").rstrip(".") + "s"
    if hours:
        text = f"{hours}h{minutes}m{text}"
    elif minutes:
        text = f"{minutes}m{text}"
    return sign + text


def _to_timedelta(value: Any) -> Any:
    return parse_duration(value) if isinstance(value, str) else value


Duration = Annotated[
    timedelta,
    BeforeValidator(_to_timedelta),
    PlainSerializer(format_duration, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "duration", DURATION_KEY: True}),
]
"""A ``timedelta`` read from and written as a Go duration string."""

_DURATION_CORE_SCHEMA: dict[str, Any] = dict(TypeAdapter(Duration).core_schema)


def duration_core_schema(timedelta_schema: dict[str, Any]) -> CoreSchema:
    """``Duration``'s validation and serialisation around a (plain) timedelta core schema."""
    return {**_DURATION_CORE_SCHEMA, "schema": timedelta_schema}


def is_duration_core_schema(schema: dict[str, Any]) -> bool:
    """Whether a core schema node already is ``Duration``'s."""
    function = schema.get("function")
    return isinstance(function, dict) and function.get("function") is _to_timedelta


IntOrString = Annotated[
    StrictInt | str,
    WithJsonSchema({"x-kubernetes-int-or-string": True}),
]
"""An integer or a string (``x-kubernetes-int-or-string``), kept as whichever it was."""
