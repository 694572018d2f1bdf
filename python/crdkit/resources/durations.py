"""Field types whose Kubernetes wire form differs from pydantic's default.

``Duration`` is a ``timedelta`` written as a Go duration string (``"1h30m0s"``), the form
Kubernetes APIs use (``metav1.Duration``); pydantic's default would be ISO 8601 (``PT1H30M``),
which the apiserver's ``duration`` format reads differently. It reads every string that
format accepts (``"3d"`` too) and no other value. ``ApiModel`` gives every plain ``timedelta``
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
    "apiserver_parse_duration",
    "duration_core_schema",
    "format_duration",
    "go_parse_duration",
    "is_duration_core_schema",
    "parse_duration",
]

DURATION_KEY = "x-crdkit-go-duration"

_NS_PER_UNIT = {
    "ns": 1,
    "us": 1_000,  # Go accepts three spellings of micro
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_INT64_MAX = 2**63 - 1
_UINT64 = 2**64
# go-openapi strfmt's fallback when time.ParseDuration fails: every "<digits><space><letters>"
# anywhere in the text whose letters name a unit (Go's \d and \s are ASCII; \s has no \v).
_LOOSE_PART = re.compile(r"([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+)")
_LOOSE_UNITS = (
    (("ns", "nano"), 1),
    (("us", "µs", "micro"), 1_000),
    (("ms", "milli"), 1_000_000),
    (("s", "sec"), 1_000_000_000),
    (("m", "min"), 60_000_000_000),
    (("h", "hr", "hour"), 3_600_000_000_000),
    (("d", "day"), 86_400_000_000_000),
    (("w", "wk", "week"), 604_800_000_000_000),
)


def _leading_digits(text: str) -> tuple[str, str]:
    index = 0
    while index < len(text) and "0" <= text[index] <= "9":
        index += 1
    return text[:index], text[index:]


def go_parse_duration(text: str) -> int | None:
    """Go's ``time.ParseDuration`` in nanoseconds, or ``None`` where Go returns an error.

    A transcription of Go's algorithm (overflow checks and float64 fraction included), so
    the same strings pass and give the same number.
    """
    rest = text
    negative = False
    if rest[:1] in ("-", "+"):
        negative = rest[0] == "-"
        rest = rest[1:]
    if rest == "0":
        return 0
    if not rest:
        return None
    total = 0
    while rest:
        if not (rest[0] == "." or "0" <= rest[0] <= "9"):
            return None
        whole, rest = _leading_digits(rest)
        value = int(whole) if whole else 0
        if value > 2**63:
            return None
        fraction, scale, has_fraction = 0, 1.0, False
        if rest[:1] == ".":
            digits, rest = _leading_digits(rest[1:])
            has_fraction = bool(digits)
            for digit in digits:  # Go stops adding precision once the integer would overflow
                if fraction > _INT64_MAX // 10 or fraction * 10 + int(digit) > 2**63:
                    break
                fraction, scale = fraction * 10 + int(digit), scale * 10
        if not whole and not has_fraction:
            return None
        end = 0
        while end < len(rest) and not (rest[end] == "." or "0" <= rest[end] <= "9"):
            end += 1
        unit = _NS_PER_UNIT.get(rest[:end])
        if unit is None:
            return None
        rest = rest[end:]
        if value > 2**63 // unit:
            return None
        value *= unit
        if fraction > 0:
            value += int(float(fraction) * (float(unit) / scale))
            if value > 2**63:
                return None
        total = (total + value) % _UINT64  # a uint64 in Go
        if total > 2**63:
            return None
    if negative:
        return -total
    return None if total > _INT64_MAX else total


def _wrap_int64(value: int) -> int:
    value %= _UINT64
    return value - _UINT64 if value > _INT64_MAX else value


def apiserver_parse_duration(text: str) -> int | None:
    """What the apiserver's ``duration`` format makes of a string, in nanoseconds.

    go-openapi strfmt's ``ParseDuration``: Go's syntax first; failing that, the sum of every
    ``<digits> <unit>`` found anywhere in the text, units matched case-insensitively (``d``,
    ``3 days``, ``2wk``, ``1 hour``, and words starting with nano/micro/milli/sec/min/hour/
    day/week), with Go's int64 wrap-around. Signs and fractions are not seen by the fallback:
    ``-3d`` is three days, ``1.5d`` five. ``None``: the apiserver refuses the string.
    """
    exact = go_parse_duration(text)
    if exact is not None:
        return exact
    total, matched = 0, False
    for digits, word in _LOOSE_PART.findall(text):
        factor = int(digits)
        if factor > _INT64_MAX:
            return None  # strconv.Atoi fails, and so does the whole string
        unit = word.lower()
        for variants, nanoseconds in _LOOSE_UNITS:
            for index, variant in enumerate(variants):
                last = index == len(variants) - 1
                if (last and unit.startswith(variant)) or variant == unit:
                    matched = True
                    total = _wrap_int64(total + _wrap_int64(factor * nanoseconds))
    return total if matched else None


def _nanoseconds_to_timedelta(nanoseconds: int) -> timedelta:
    # timedelta has microseconds; round half away from zero, like Go's Duration.Round.
    micros, rest = divmod(abs(nanoseconds), 1000)
    micros += 1 if rest >= 500 else 0
    return timedelta(microseconds=micros if nanoseconds >= 0 else -micros)


def parse_duration(text: str) -> timedelta:
    """A duration string as the apiserver's ``duration`` format reads it, as a ``timedelta``.

    Go durations (``"90s"``, ``"1h30m"``, ``"250ms"``) and everything else the apiserver
    accepts (``"3d"``, ``"2 weeks"``): see ``apiserver_parse_duration``.
    """
    nanoseconds = apiserver_parse_duration(text)
    if nanoseconds is None:
        raise ValueError(
            f"{text!r} is not a duration such as '90s', '1h30m', '250ms' or '3d' "
            "(a number followed by a unit)"
        )
    return _nanoseconds_to_timedelta(nanoseconds)


# The largest timedelta a Go duration (int64 nanoseconds) holds: beyond it the written form
# would be read back as a different value.
_MAX_GO_DURATION = timedelta(microseconds=_INT64_MAX // 1000)


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
    if isinstance(value, str):
        return parse_duration(value)
    if isinstance(value, timedelta):
        if abs(value) > _MAX_GO_DURATION:
            raise ValueError(
                f"{value} is beyond ±{_MAX_GO_DURATION.days} days, the range of a Go duration"
            )
        return value
    # pydantic would read a number as seconds; the apiserver's duration is a string only.
    raise ValueError(f"a duration is a string such as '90s' or '3d', not {type(value).__name__}")


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


def _whole_number(value: Any) -> Any:
    # The apiserver takes 4.0 for an integer (and stores 4), but no float from 2**53 on and
    # no integer beyond int64 (it decodes those as floats).
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        raise ValueError(f"{value} is beyond int64, which the apiserver refuses")
    return value


IntOrString = Annotated[
    StrictInt | str,
    BeforeValidator(_whole_number),
    WithJsonSchema({"x-kubernetes-int-or-string": True}),
]
"""An integer or a string (``x-kubernetes-int-or-string``), kept as whichever it was.

A whole-number float (``4.0``) is the integer 4, as the apiserver reads it."""
