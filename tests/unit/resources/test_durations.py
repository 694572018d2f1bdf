from datetime import timedelta

import pytest
from pydantic import TypeAdapter, ValidationError

from crdkit.crd import Duration, IntOrString
from crdkit.resources.durations import format_duration, parse_duration


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


@pytest.mark.parametrize("text", ["", "1", "1d", "h", "1.5.5s", "PT1H"])
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


def test_int_or_string_keeps_the_type() -> None:
    adapter = TypeAdapter(IntOrString)
    assert adapter.validate_python(5) == 5
    assert adapter.validate_python("25%") == "25%"
