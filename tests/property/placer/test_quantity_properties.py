"""Hypothesis: the Rust parser agrees with the pure-Python one, and formatting round-trips."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from crdkit import _placer
from crdkit.placer import quantity

SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]

numbers = st.builds(
    lambda sign, whole, frac, dot: f"{sign}{whole}{'.' if dot else ''}{frac if dot else ''}",
    st.sampled_from(["", "+", "-"]),
    st.from_regex(r"[0-9]{0,12}", fullmatch=True),
    st.from_regex(r"[0-9]{0,12}", fullmatch=True),
    st.booleans(),
)
suffixes = st.one_of(
    st.sampled_from(SUFFIXES),
    st.builds(
        lambda e, sign, n: f"{e}{sign}{n}",
        st.sampled_from("eE"),
        st.sampled_from(["", "+", "-"]),
        st.integers(0, 60),
    ),
)
quantity_texts = st.builds(lambda n, s: n + s, numbers, suffixes)


def outcome(parse: object, value: object, allow_negative: bool) -> tuple[str, object]:
    try:
        return ("ok", parse(value, allow_negative=allow_negative))  # type: ignore[operator]
    except ValueError as err:
        return ("error", str(err))


@given(quantity_texts, st.booleans())
def test_rust_and_python_agree_on_well_shaped_text(text: str, allow_negative: bool) -> None:
    assert outcome(_placer.parse_quantity, text, allow_negative) == outcome(
        quantity.parse_quantity, text, allow_negative
    )


@given(st.text(alphabet="0123456789.+-eEinumkKMGTP ", max_size=12), st.booleans())
def test_rust_and_python_agree_on_arbitrary_text(text: str, allow_negative: bool) -> None:
    assert outcome(_placer.parse_quantity, text, allow_negative) == outcome(
        quantity.parse_quantity, text, allow_negative
    )


@given(st.one_of(st.integers(-(10**20), 10**20), st.floats(allow_nan=False, allow_infinity=False)))
def test_rust_and_python_agree_on_numbers(value: int | float) -> None:
    rust, python = (
        outcome(_placer.parse_quantity, value, True),
        outcome(quantity.parse_quantity, value, True),
    )
    assert rust[0] == python[0]
    if rust[0] == "ok":
        assert rust == python


@given(st.integers(0, 2**63 - 1))
def test_format_then_parse_round_trips(milli: int) -> None:
    text = quantity.format_quantity(milli)
    assert _placer.parse_quantity(text) == milli
    assert quantity.parse_quantity(text) == milli
