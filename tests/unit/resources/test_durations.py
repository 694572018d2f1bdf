from datetime import timedelta

import pytest
from pydantic import TypeAdapter, ValidationError

from crdkit.crd import Duration, IntOrString
from crdkit.resources.durations import (
    apiserver_parse_duration,
    format_duration,
    go_parse_duration,
    parse_duration,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0s", timedelta(0)),
        ("1h30m0s", timedelta(hours=1, minutes=30)),
        ("1.5s", timedelta(seconds=1.5)),
        ("250ms", timedelta(milliseconds=250)),
        ("-3s", timedelta(seconds=-3)),
        ("2h45m", timedelta(hours=2, minutes=45)),
        ("1us", timedelta(microseconds=1)),
        ("0", timedelta(0)),
    ],
)
def test_parse_go_durations(text: str, value: timedelta) -> None:
    assert parse_duration(text) == value


# What kube-apiserver v1.37's duration format (go-openapi strfmt) was seen to accept beyond
# Go's syntax; tests/integration/crd/test_scalar_parity.py asks the real apiserver again.
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3d", timedelta(days=3)),
        ("2wk", timedelta(weeks=2)),
        ("3 days", timedelta(days=3)),
        ("3Hours", timedelta(hours=3)),
        ("3MS", timedelta(milliseconds=3)),
        ("3sec", timedelta(seconds=3)),
        ("3hr", timedelta(hours=3)),
        ("3\td", timedelta(days=3)),
        ("3minutesfoo", timedelta(minutes=3)),
        ("abc 3d xyz", timedelta(days=3)),  # any "<digits> <unit>" anywhere counts
        ("-3d", timedelta(days=3)),  # the fallback sees no sign
        ("1.5d", timedelta(days=5)),  # nor a fraction: "5d"
        ("1h30x", timedelta(hours=1)),
        ("PT1H", timedelta(hours=1)),
        ("3μs", timedelta(microseconds=3)),
    ],
)
def test_parse_what_the_apiserver_accepts(text: str, value: timedelta) -> None:
    assert parse_duration(text) == value


def test_go_overflow_wraps_like_the_apiserver() -> None:
    # Go's ParseDuration overflows, strfmt's fallback multiplies in wrapping int64.
    assert apiserver_parse_duration("2562048h") == 2562048 * 3_600_000_000_000 - 2**64
    assert go_parse_duration("2562047h47m16.854775807s") == 2**63 - 1
    assert go_parse_duration("2562047h47m16.854775808s") is None
    assert go_parse_duration("-2562047h47m16.854775808s") == -(2**63)


@pytest.mark.parametrize(
    "text",
    ["", "1", "h", "3", "3X", "3hrs", "3wks", "3mi", "3µsec", "3\vs", "99999999999999999999d"],
)
def test_bad_durations_name_the_input(text: str) -> None:
    with pytest.raises(ValueError, match="is not a duration"):
        parse_duration(text)


def test_format_like_go() -> None:
    assert format_duration(timedelta(hours=26, seconds=5)) == "26h0m5s"
    assert format_duration(timedelta(minutes=2)) == "2m0s"
    assert format_duration(timedelta(milliseconds=1500)) == "1.5s"
    assert format_duration(-timedelta(minutes=1)) == "-1m0s"


def test_duration_field_reads_and_writes_go_strings() -> None:
    adapter = TypeAdapter(Duration)
    assert adapter.validate_python("90s") == timedelta(seconds=90)
    assert adapter.dump_json(timedelta(seconds=90)) == b'"1m30s"'
    with pytest.raises(ValidationError):
        adapter.validate_python("soon")


@pytest.mark.parametrize("value", [5, 1.5, True, None])
def test_duration_refuses_numbers(value: object) -> None:
    # pydantic's timedelta reads 5 as five seconds; the apiserver refuses a non-string.
    with pytest.raises(ValidationError, match="a duration is a string"):
        TypeAdapter(Duration).validate_python(value)


def test_duration_refuses_what_a_go_duration_cannot_hold() -> None:
    with pytest.raises(ValidationError, match="range of a Go duration"):
        TypeAdapter(Duration).validate_python(timedelta(days=300 * 365))


def test_int_or_string_keeps_the_type() -> None:
    adapter = TypeAdapter(IntOrString)
    assert adapter.validate_python(5) == 5
    assert adapter.validate_python("25%") == "25%"
