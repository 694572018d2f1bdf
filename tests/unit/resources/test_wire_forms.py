"""ApiModel gives plain datetime and timedelta fields the forms the apiserver accepts, and
writes None as null where leaving the field out would mean something else."""

# ruff: noqa: RUF012 - pydantic copies mutable defaults
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import BaseModel, Field, ValidationError, model_serializer

from crdkit.client.codec import codec_for
from crdkit.resources import ApiModel, CustomResource, ObjectMeta


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


class Span(ApiModel):
    start_at: int
    end_at: int | None  # required: absent is refused


class NullsSpec(ApiModel):
    count: int | None  # required: absent is refused
    limit: int | None = 5  # absent means 5
    made: int | None = Field(default_factory=lambda: 1)  # absent means 1
    note: str | None = None  # absent means None: left out as before
    spans: list[Span] = []
    children: list[NullsSpec] = []


class Nulls(CustomResource, group="nulls.example.com", version="v1"):
    spec: NullsSpec


def _nulls() -> Nulls:
    return Nulls(
        metadata=ObjectMeta(name="n"),
        spec=NullsSpec(
            count=None,
            limit=None,
            made=None,
            spans=[Span(start_at=1, end_at=None)],
            children=[NullsSpec(count=None)],
        ),
    )


def test_none_is_written_as_null_where_absent_means_something_else() -> None:
    obj = _nulls()
    expected_spec = {
        "count": None,
        "limit": None,
        "made": None,
        "spans": [{"startAt": 1, "endAt": None}],
        "children": [{"count": None, "limit": 5, "made": 1, "spans": [], "children": []}],
    }
    assert obj.to_dict()["spec"] == expected_spec
    assert Nulls.model_validate_json(obj.to_json()) == obj
    assert Nulls.model_validate_json(codec_for(Nulls).encode(obj)) == obj
    # Apply sends what was set: the nested child set only count.
    assert obj.to_apply()["spec"] == {
        **expected_spec,
        "children": [{"count": None}],
    }


def test_explicit_include_and_exclude_still_win() -> None:
    obj = _nulls()
    exclude = {"spec": {"count": True, "spans": {0: {"end_at"}}}}
    dumped = obj.model_dump(by_alias=True, exclude_none=True, exclude=exclude)
    assert "count" not in dumped["spec"]
    assert dumped["spec"]["spans"] == [{"startAt": 1}]
    assert obj.spec.model_dump(exclude_none=True, include={"limit"}) == {"limit": None}
    # Without exclude_none, nothing changes; python names without by_alias.
    assert obj.spec.spans[0].model_dump() == {"start_at": 1, "end_at": None}
    assert obj.spec.spans[0].model_dump(exclude_none=True) == {"start_at": 1, "end_at": None}


def test_models_without_such_fields_and_own_serialisers_are_left_alone() -> None:
    class Plainer(ApiModel):
        note: str | None = None

    class Own(ApiModel):
        count: int | None

        @model_serializer
        def _mine(self) -> dict[str, Any]:
            return {"mine": True}

    assert Plainer().model_dump(exclude_none=True) == {}
    assert "serialization" not in Plainer.__pydantic_core_schema__
    assert Own(count=None).model_dump(exclude_none=True) == {"mine": True}
