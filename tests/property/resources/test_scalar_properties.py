"""Invariants of the scalar wire forms: what crdkit writes, it (and the apiserver) reads back."""

from __future__ import annotations

import re
from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from crdkit.resources import Bytes, Duration, Quantity
from crdkit.resources.durations import apiserver_parse_duration, go_parse_duration
from crdkit.resources.scalars import QUANTITY_PATTERN, is_base64

BYTES = TypeAdapter(Bytes)
DURATION = TypeAdapter(Duration)
QUANTITY = TypeAdapter(Quantity)
GO_LIMIT = timedelta(microseconds=(2**63 - 1) // 1000)


@given(st.binary(min_size=1, max_size=64))
def test_bytes_round_trip_through_text_the_byte_format_accepts(data: bytes) -> None:
    text = BYTES.dump_python(data, mode="json")
    assert is_base64(text)
    assert BYTES.validate_python(text) == data


@given(st.timedeltas(min_value=-GO_LIMIT, max_value=GO_LIMIT))
def test_durations_are_written_in_go_syntax_and_read_back(value: timedelta) -> None:
    text = DURATION.dump_python(value, mode="json")
    # Go's own parser takes it (so a Go operator's metav1.Duration reads it too) ...
    assert go_parse_duration(text) == (value // timedelta(microseconds=1)) * 1000
    # ... and crdkit reads the same value back.
    assert DURATION.validate_python(text) == value


@given(st.text(alphabet="0123456789 .dhmswkyaerinoutcDHMS-+\t", max_size=16))
def test_go_syntax_is_a_subset_of_the_apiserver_format(text: str) -> None:
    # strfmt tries Go's parser first, so whatever Go reads, the apiserver reads the same.
    go = go_parse_duration(text)
    if go is not None:
        assert apiserver_parse_duration(text) == go


@given(
    st.from_regex(QUANTITY_PATTERN, fullmatch=True)
    | st.integers(-(2**63), 2**63 - 1)
    | st.integers(-(2**53) + 1, 2**53 - 1).map(float)
)
def test_a_quantity_is_held_as_text_that_is_itself_a_quantity(value: str | int | float) -> None:
    # What crdkit holds (and writes) for an accepted quantity is a string the CRD's pattern
    # accepts and that reads back unchanged, so a stored object always round-trips.
    text = QUANTITY.validate_python(value)
    assert re.fullmatch(QUANTITY_PATTERN, text)
    assert QUANTITY.validate_python(text) == text
    if not isinstance(value, str):
        assert int(text) == value
