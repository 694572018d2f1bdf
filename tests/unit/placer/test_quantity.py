"""The quantity parsers, Rust and pure Python, on the cases the contract names."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from crdkit import _placer
from crdkit.placer import quantity

Parser = Callable[..., int]
PARSERS = [
    pytest.param(_placer.parse_quantity, id="rust"),
    pytest.param(quantity.parse_quantity, id="python"),
]


@pytest.mark.parametrize("parse", PARSERS)
@pytest.mark.parametrize(
    ("text", "milli"),
    [
        ("500m", 500),
        ("1.5", 1500),
        ("64Gi", 64 * 2**30 * 1000),
        ("1e3", 1_000_000),
        ("2k", 2_000_000),
        ("0.5Ki", 512_000),
        ("1n", 1),
        ("0", 0),
        (8, 8000),
        (0.1, 100),
        (1.5e3, 1_500_000),
    ],
)
def test_valid_quantities(parse: Parser, text: str | int | float, milli: int) -> None:
    assert parse(text) == milli


@pytest.mark.parametrize("parse", PARSERS)
@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("abc", "not a Kubernetes quantity"),
        ("1.2.3", "not a Kubernetes quantity"),
        ("1 Gi", "not a Kubernetes quantity"),
        ("", "not a Kubernetes quantity"),
        ("-1", "must not be negative"),
        ("10Ei", "out of range"),
        ("9" * 39, "out of range"),
        (-3, "must not be negative"),
        (10**30, "out of range"),
    ],
)
def test_refused_quantities_name_the_input(parse: Parser, text: str | int, reason: str) -> None:
    with pytest.raises(ValueError, match=reason) as info:
        parse(text)
    assert f'"{text}"' in str(info.value)


@pytest.mark.parametrize("parse", PARSERS)
def test_negative_allowed_on_request(parse: Parser) -> None:
    assert parse("-1.5", allow_negative=True) == -1500


@pytest.mark.parametrize("parse", PARSERS)
@pytest.mark.parametrize("value", [True, None, [1], float("nan")])
def test_wrong_types_are_refused(parse: Parser, value: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        parse(value)


def test_format_quantity() -> None:
    assert quantity.format_quantity(8000) == "8"
    assert quantity.format_quantity(1500) == "1500m"
