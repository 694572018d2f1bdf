"""Invariants of the resource models: timestamps and metadata survive a JSON round trip, and
default plurals are valid resource names."""

from __future__ import annotations

from datetime import UTC

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from crdkit.resources import MicroTime, ObjectMeta, Time
from crdkit.resources.plural import pluralize


class _Stamps(BaseModel):
    time: Time
    micro: MicroTime


@given(st.datetimes(timezones=st.just(UTC)))
def test_micro_time_round_trips_exactly_and_time_to_the_second(value: object) -> None:
    stamps = _Stamps(time=value, micro=value)  # type: ignore[arg-type]
    again = _Stamps.model_validate_json(stamps.model_dump_json())
    assert again.micro == stamps.micro
    assert again.time == stamps.time.replace(microsecond=0)


_LABEL = st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?\Z")
_META = st.fixed_dictionaries(
    {"name": _LABEL},
    optional={
        "namespace": _LABEL,
        "labels": st.dictionaries(_LABEL, _LABEL, max_size=3),
        "annotations": st.dictionaries(_LABEL, st.text(max_size=10), max_size=3),
        "finalizers": st.lists(_LABEL, max_size=2),
        "generation": st.integers(1, 100),
        "resourceVersion": st.integers(1, 10**9).map(str),
        "someFutureField": st.integers(),
    },
)


@given(_META)
def test_object_meta_round_trip_keeps_every_field(raw: dict[str, object]) -> None:
    meta = ObjectMeta.model_validate(raw)
    dumped = meta.model_dump(mode="json", by_alias=True, exclude_none=True)
    for key, value in raw.items():
        assert dumped[key] == value


@given(st.from_regex(r"\A([A-Z][a-z0-9]{0,6}){1,3}\Z"))
def test_plurals_of_kinds_are_resource_names(kind: str) -> None:
    plural = pluralize(kind).lower()
    assert plural.isalnum()
    assert plural[: max(len(kind) - 3, 0)] == kind.lower()[: max(len(kind) - 3, 0)]
