"""Kubernetes quantities as exact integer milli-units, in pure Python.

This is the readable statement of the rules that the Rust parser (`crdkit._placer.parse_quantity`)
implements; the pure-Python reference placer uses it and a differential test keeps the two equal.

- Grammar: an optional sign, digits with at most one decimal point, then a suffix: nothing, a
  decimal SI suffix (``n u m k M G T P E``), a binary one (``Ki Mi Gi Ti Pi Ei``), or a decimal
  exponent (``e3``, ``E-2``).
- The result is ``ceil(value * 1000)`` (away from zero for negatives): a request is never
  understated.
- At most 38 significant digits, and the result must fit a signed 64-bit integer.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = ["MAX_MILLI", "MAX_SIGNIFICANT_DIGITS", "format_quantity", "parse_quantity"]

MAX_SIGNIFICANT_DIGITS = 38
MAX_MILLI = 2**63 - 1

# Kubernetes' suffixes: the decimal ones above one step by 10**3 from k to E, the binary ones
# by 2**10 from Ki to Ei.
_SUFFIXES: dict[str, Fraction] = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    **{prefix: Fraction(10 ** (3 * step)) for step, prefix in enumerate("kMGTPE", start=1)},
    **{f"{prefix}i": Fraction(2 ** (10 * step)) for step, prefix in enumerate("KMGTPE", start=1)},
}
_QUANTITY = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(.*)", re.ASCII | re.DOTALL)
_EXPONENT = re.compile(r"[eE]([+-]?)(\d+)", re.ASCII)
# Exponents beyond this are clamped: they overflow or round to one milli-unit either way.
_EXPONENT_CLAMP = 1_000_000


def _malformed(text: str) -> ValueError:
    return ValueError(f"invalid quantity {_quote(text)}: not a Kubernetes quantity")


# The same quoting as Rust's `{:?}` for the inputs that matter (ASCII, quotes, backslashes).
_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"})


def _quote(text: str) -> str:
    return f'"{text.translate(_ESCAPES)}"'


def _scale(suffix: str) -> Fraction | None:
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    match = _EXPONENT.fullmatch(suffix)
    if match is None:
        return None
    magnitude = min(int(match.group(2)), _EXPONENT_CLAMP)
    exponent = -magnitude if match.group(1) == "-" else magnitude
    # Beyond +-400 the result is decided anyway (out of range, or one milli-unit, or zero):
    # clamping keeps the arithmetic small.
    return Fraction(10) ** max(-400, min(400, exponent))


def _parse_text(text: str, allow_negative: bool) -> int:
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise _malformed(text)
    sign, int_part, frac_part, suffix = (
        match.group(1),
        match.group(2),
        match.group(3),
        match.group(4),
    )
    frac_part = frac_part or ""
    if not int_part and not frac_part:
        raise _malformed(text)
    scale = _scale(suffix)
    if scale is None:
        raise _malformed(text)
    frac_trimmed = frac_part.rstrip("0")
    significant = (int_part + frac_trimmed).lstrip("0")
    if len(significant) > MAX_SIGNIFICANT_DIGITS:
        raise ValueError(f"invalid quantity {_quote(text)}: out of range")
    mantissa = Fraction(int(significant or "0"), 10 ** len(frac_trimmed))
    exact_milli = mantissa * scale * 1000
    if exact_milli > MAX_MILLI:  # checked before ceil so giant values fail fast
        raise ValueError(f"invalid quantity {_quote(text)}: out of range")
    milli = math.ceil(exact_milli)
    if milli > MAX_MILLI:
        raise ValueError(f"invalid quantity {_quote(text)}: out of range")
    if sign == "-" and milli != 0:
        if not allow_negative:
            raise ValueError(f"invalid quantity {_quote(text)}: must not be negative")
        return -milli
    return milli


def parse_quantity(value: str | int | float, *, allow_negative: bool = False) -> int:
    """Return ``value`` in exact integer milli-units; a ``ValueError`` names refused input."""
    if isinstance(value, bool):
        raise TypeError(f"invalid quantity {value!r}: expected a string or a number")
    if isinstance(value, str):
        return _parse_text(value, allow_negative)
    if isinstance(value, int):
        if value < 0 and not allow_negative:
            raise ValueError(f'invalid quantity "{value}": must not be negative')
        if abs(value * 1000) > MAX_MILLI:
            raise ValueError(f'invalid quantity "{value}": out of range')
        return value * 1000
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f'invalid quantity "{value}": not a Kubernetes quantity')
        try:
            return _parse_text(repr(value), allow_negative)
        except ValueError as err:
            reason = str(err).split(": ", 1)[1]
            raise ValueError(f'invalid quantity "{value}": {reason}') from None
    raise TypeError(f"invalid quantity {value!r}: expected a string or a number")


def format_quantity(milli: int) -> str:
    """The shortest plain form of a milli-unit count: ``"8"`` for 8000, ``"1500m"`` for 1500."""
    if milli % 1000 == 0:
        return str(milli // 1000)
    return f"{milli}m"
