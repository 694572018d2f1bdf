"""The numbers a CRD can carry, so that gen-crd never writes one the apiserver refuses or misreads.

Python numbers are unbounded and may be ``inf`` or ``nan``; a CRD's numbers are not:

* JSON has no ``inf`` or ``nan``: a CRD holding one cannot even be sent (``json: unsupported
  value: +Inf``), so a non-finite default or bound is an error.
* ``minLength`` and the other size keywords are Go ``int64`` fields: beyond that the CRD is
  refused when decoded.
* ``minimum``, ``maximum`` and ``multipleOf`` are Go ``float64`` fields. On an ``integer`` field
  the apiserver checks that the stored bound, printed in its shortest form, parses as an
  ``int64``, and refuses *every* value when it does not: ``2**63 - 1`` is stored as ``2**63``
  and ``-2**63`` prints as ``-9223372036854776000``, so both break the field. An integer bound
  that float64 cannot hold exactly would also be a different bound from the model's. On a
  ``number`` field a whole-number value is compared with the bound converted to ``int64``,
  which for a bound beyond that range gives nonsense (``maximum: 1e300`` refuses ``5``).
  Either way the bound must lie strictly between ``-2**63`` and ``2**63``.
* An integer default must fit ``int64``: a larger one is decoded as a float, which an
  ``integer`` schema refuses.

Each function returns the reason a value is unusable, or ``None``; the converter turns a
reason into a ``SchemaError`` naming the field.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["bound_problem", "non_finite", "size_problem", "typed_default_problem"]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
# Bounds are float64 and must print as an int64 (see above): |bound| < 2**63, whose largest
# float64 is 2**63 - 1024.
BOUND_LIMIT = 2**63 - 1024

NUMERIC_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
SIZE_BOUNDS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")


def non_finite(value: Any) -> float | None:
    """The first ``inf``/``nan`` anywhere inside a JSON-like value, or ``None``."""
    if isinstance(value, float):
        return None if math.isfinite(value) else value
    if isinstance(value, dict):
        items: Any = [*value.keys(), *value.values()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = value
    else:
        return None
    for item in items:
        found = non_finite(item)
        if found is not None:
            return found
    return None


def bound_problem(keyword: str, value: Any, kind: str | None) -> str | None:
    """Why ``keyword: value`` on a field of type ``kind`` is unusable, or ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"{keyword} {value} is not finite: JSON, and so a CRD, cannot hold it"
    if kind not in ("integer", "number"):
        return None
    try:
        as_stored = float(value)
    except OverflowError:  # an int beyond float64 itself
        as_stored = math.inf
    if abs(as_stored) > BOUND_LIMIT:
        return (
            f"{keyword} {value} is out of the range the apiserver can check: it compares "
            f"{'' if kind == 'integer' else 'whole-number '}values with bounds as 64-bit "
            f"integers, so a bound must lie within -{BOUND_LIMIT}..{BOUND_LIMIT}"
        )
    if kind == "integer" and as_stored != value:  # rounded: the apiserver checks another bound
        return (
            f"{keyword} {value} cannot be held exactly by the apiserver, which stores bounds "
            f"as 64-bit floats (it would check {int(as_stored)} instead)"
        )
    return None


def size_problem(keyword: str, value: Any) -> str | None:
    """Why a length or size bound is unusable (it is a Go ``int64``), or ``None``."""
    if isinstance(value, int) and not isinstance(value, bool) and value > INT64_MAX:
        return (
            f"{keyword} {value} does not fit the apiserver's 64-bit integer (at most {INT64_MAX})"
        )
    return None


def typed_default_problem(value: Any, schema: dict[str, Any]) -> str | None:
    """Why a default (already checked finite) does not fit the integer fields it fills."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if schema.get("type") == "integer" and not INT64_MIN <= value <= INT64_MAX:
            return (
                f"default {value} does not fit the apiserver's 64-bit integer "
                f"({INT64_MIN}..{INT64_MAX})"
            )
        return None
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            child = properties.get(key, additional if isinstance(additional, dict) else {})
            problem = typed_default_problem(item, child)
            if problem is not None:
                return problem
    if isinstance(value, list):
        for item in value:
            problem = typed_default_problem(item, schema.get("items", {}))
            if problem is not None:
                return problem
    return None
