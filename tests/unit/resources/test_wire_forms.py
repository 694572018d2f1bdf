"""ApiModel gives plain datetime and timedelta fields the forms the apiserver accepts."""

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import BaseModel, Field, ValidationError

from crdkit.resources import ApiModel


class Plain(BaseModel):
    wait: timedelta
    at: datetime


class Inner(ApiModel):
    wait: timedelta


class Outer(ApiModel):
    wait: timedelta
    waits: list[timedelta] = Field(default_factory=list)
    maybe: timedelta | None = None
    at: datetime
    inner: Inner | None = None
    plain: Plain | None = None


def test_timedeltas_read_and_write_go_durations() -> None:
    outer = Outer.model_validate_json(
        '{"wait":"1h30m","waits":["5s"],"maybe":"250ms","at":"2024-01-01T00:00:00Z",'
        '"inner":{"wait":"2m"}}'
    )
    assert outer.wait == timedelta(hours=1, minutes=30)
    assert outer.maybe == timedelta(milliseconds=250)
    dumped = outer.model_dump(mode="json")
    assert dumped["wait"] == "1h30m0s"
    assert dumped["waits"] == ["5s"]
    assert dumped["maybe"] == "0.25s"
    assert dumped["inner"] == {"wait": "2m0s"}
    assert Outer(wait=timedelta(seconds=1), at=datetime.now(UTC)).wait == timedelta(seconds=1)


def test_datetimes_must_carry_a_zone() -> None:
    with pytest.raises(ValidationError, match="timezone info"):
        Outer(wait="1s", at="2024-01-01T00:00:00")  # type: ignore[arg-type]


def test_plain_models_inside_keep_pydantic_behaviour() -> None:
    outer = Outer.model_validate(
        {"wait": "1s", "at": "2024-01-01T00:00:00Z",
         "plain": {"wait": "PT1H", "at": "2024-01-01T00:00:00"}}
    )  # fmt: skip
    assert outer.plain is not None
    assert outer.model_dump(mode="json")["plain"] == {"wait": "PT1H", "at": "2024-01-01T00:00:00"}
    assert Plain(wait=timedelta(hours=1), at=datetime(2024, 1, 1)).model_dump(mode="json") == {
        "wait": "PT1H",
        "at": "2024-01-01T00:00:00",
    }
