"""The numbers a CRD can carry: finite, and bounds the apiserver checks as 64-bit integers."""

from __future__ import annotations

from typing import Any

import pytest

from crdkit.crd.limits import (
    BOUND_LIMIT,
    bound_problem,
    non_finite,
    size_problem,
    typed_default_problem,
)


def test_bound_limit_is_the_largest_float64_below_2_63() -> None:
    assert float(BOUND_LIMIT) == BOUND_LIMIT
    assert float(BOUND_LIMIT + 1) in (float(BOUND_LIMIT), 2.0**63)
    assert float(BOUND_LIMIT + 512) == 2.0**63  # the next float64 up


def test_non_finite_is_found_at_any_depth() -> None:
    assert non_finite(1.5) is None
    assert non_finite({"a": [1, {"b": 2.0}], "c": "inf"}) is None
    assert non_finite([1.0, [2.0, {"k": float("-inf")}]]) == float("-inf")
    found = non_finite({"k": (float("nan"),)})
    assert found is not None
    assert found != found  # nan
    assert non_finite({float("inf"): 1}) == float("inf")  # a key counts too


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (BOUND_LIMIT, "integer"),
        (-BOUND_LIMIT, "integer"),
        (2**62, "integer"),
        (2**53, "integer"),
        (0.5, "number"),
        (-1e18, "number"),
        (float(BOUND_LIMIT), "number"),
        (2**64, "string"),  # no numeric check on other types
        (True, "integer"),  # exclusiveMinimum: true (OpenAPI 3.0), not a bound
    ],
)
def test_bounds_the_apiserver_holds(value: Any, kind: str) -> None:
    assert bound_problem("maximum", value, kind) is None


@pytest.mark.parametrize(
    ("value", "kind", "reason"),
    [
        (2**63 - 1, "integer", "out of the range"),  # stored as 2**63
        (-(2**63), "integer", "out of the range"),  # printed as -9223372036854776000
        (2**63, "integer", "out of the range"),
        (10**400, "integer", "out of the range"),  # beyond float64 itself
        (2**53 + 1, "integer", "cannot be held exactly"),
        (1e300, "number", "out of the range"),
        (-(2.0**63), "number", "out of the range"),
        (float("inf"), "number", "not finite"),
        (float("nan"), "integer", "not finite"),
        (float("-inf"), None, "not finite"),
    ],
)
def test_bounds_the_apiserver_cannot_hold(value: Any, kind: str | None, reason: str) -> None:
    problem = bound_problem("maximum", value, kind)
    assert problem is not None
    assert reason in problem


def test_sizes_are_go_int64() -> None:
    assert size_problem("maxLength", 2**63 - 1) is None
    problem = size_problem("maxItems", 2**63)
    assert problem is not None
    assert "maxItems 9223372036854775808" in problem


def test_integer_defaults_are_checked_where_the_schema_says_integer() -> None:
    integer = {"type": "integer"}
    assert typed_default_problem(2**63 - 1, integer) is None
    assert typed_default_problem(-(2**63), integer) is None
    assert typed_default_problem(2**63, integer) is not None
    assert typed_default_problem(2**63, {"type": "number"}) is None
    assert typed_default_problem(True, integer) is None
    nested = {
        "type": "object",
        "properties": {"sizes": {"type": "array", "items": integer}},
        "additionalProperties": {"type": "integer"},
    }
    assert typed_default_problem({"sizes": [1, 2]}, nested) is None
    assert typed_default_problem({"sizes": [1, 2**64]}, nested) is not None
    assert typed_default_problem({"other": -(2**64)}, nested) is not None
    assert typed_default_problem({"free": 2**64}, {"type": "object"}) is None  # untyped
