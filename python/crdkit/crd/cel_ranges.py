"""Cost and size ranges as cel-go computes them: ``(min, max)`` pairs of unsigned 64-bit
integers that saturate instead of overflowing, and cost factors rounded up.

The arithmetic of cel-go's ``checker.SizeEstimate``/``CostEstimate`` and the Kubernetes
library's size of ``replace()``, for ``crdkit.crd.cel_cost``.
"""

from __future__ import annotations

import math

__all__ = [
    "REGEX",
    "TRAVERSAL",
    "U64",
    "UNKNOWN",
    "Range",
    "add",
    "factor",
    "mul",
    "radd",
    "replaced_size",
    "rfactor",
    "rmul",
    "union",
]

U64 = 2**64 - 1
Range = tuple[int, int]  # (min, max), as cel-go's SizeEstimate and CostEstimate
UNKNOWN: Range = (0, U64)
TRAVERSAL = 0.1  # common.StringTraversalCostFactor
REGEX = 0.25  # common.RegexStringLengthCostFactor


def add(a: int, b: int) -> int:
    return min(a + b, U64)


def mul(a: int, b: int) -> int:
    return min(a * b, U64)


def factor(x: int, per_unit: float) -> int:
    """cel-go's multiplyByCostFactor: float64 product, rounded up, saturated."""
    product = float(x) * per_unit
    if product >= 2.0**64:
        return U64
    return math.ceil(product)


def radd(a: Range, b: Range) -> Range:
    return (add(a[0], b[0]), add(a[1], b[1]))


def rmul(a: Range, b: Range) -> Range:
    return (mul(a[0], b[0]), mul(a[1], b[1]))


def rfactor(a: Range, per_unit: float) -> Range:
    return (factor(a[0], per_unit), factor(a[1], per_unit))


def union(a: Range, b: Range) -> Range:
    return (min(a[0], b[0]), max(a[1], b[1]))


def replaced_size(text: Range, old: Range, new: Range) -> Range:
    """The library's size of ``text.replace(old, new)``: most replacements of the shortest
    match by the longest replacement, and the other way round for the least."""
    if old[0] == 0:
        count_max, kept_max = (text[1] + 1 if text[1] < U64 else text[1]), text[1]
    elif new[1] <= old[0]:
        count_max, kept_max = 0, text[1]
    else:
        count_max, kept_max = math.ceil(text[1] / old[0]), 0
    if old[1] == 0:
        count_min, kept_min = (text[0] + 1 if text[0] < U64 else text[0]), text[0]
    elif old[1] <= new[0]:
        count_min, kept_min = 0, text[0]
    else:
        count_min, kept_min = math.ceil(text[0] / old[1]), 0
    return radd(rmul((count_min, count_max), new), (kept_min, kept_max))
