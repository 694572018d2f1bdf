from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import BaseModel, ValidationError

from crdkit.resources import MicroTime, Time


class Stamps(BaseModel):
    time: Time | None = None
    micro: MicroTime | None = None


def test_time_is_written_in_utc_with_whole_seconds() -> None:
    plus_two = timezone(timedelta(hours=2))
    stamps = Stamps(time=datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=plus_two))
    assert stamps.model_dump(mode="json")["time"] == "2024-05-01T10:00:00Z"


def test_micro_time_always_has_six_fractional_digits() -> None:
    stamps = Stamps(micro=datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC))
    assert stamps.model_dump(mode="json")["micro"] == "2024-05-01T12:00:00.000000Z"


def test_apiserver_strings_round_trip() -> None:
    raw = '{"time":"2024-05-01T10:00:00Z","micro":"2024-05-01T10:00:00.000042Z"}'
    stamps = Stamps.model_validate_json(raw)
    assert stamps.micro is not None
    assert stamps.micro.microsecond == 42
    assert stamps.model_dump_json() == raw


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(ValidationError, match="timezone"):
        Stamps(time=datetime(2024, 5, 1))
