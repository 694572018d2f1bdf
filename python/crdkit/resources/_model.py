"""The pydantic base classes and timestamp types every resource model is built from.

Kubernetes JSON is camelCase; Python attributes are snake_case. ``ApiModel`` maps one to the
other and accepts both spellings on input, so objects built in code and objects read from the
apiserver look the same. ``OpenModel`` additionally keeps fields it does not declare: the
built-in kinds model only what operators commonly read, and a read-modify-write round trip
must not drop the rest (newer API fields, fields crdkit does not model).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, PlainSerializer
from pydantic.alias_generators import to_camel

__all__ = ["ApiModel", "MicroTime", "OpenModel", "Time"]


class ApiModel(BaseModel):
    """camelCase on the wire, snake_case in Python, both accepted on input.

    Use it as the base of ``spec``/``status`` models of custom resources. Undeclared fields
    are ignored, as the apiserver prunes them from custom resources anyway.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class OpenModel(ApiModel):
    """An ``ApiModel`` that keeps undeclared fields, so a round trip through it loses nothing."""

    model_config = ConfigDict(extra="allow")


def _to_utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


def _format_time(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _format_micro_time(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


Time = Annotated[
    AwareDatetime,
    AfterValidator(_to_utc),
    PlainSerializer(_format_time, return_type=str, when_used="json"),
]
"""``metav1.Time``: RFC 3339 in UTC with whole seconds, as the apiserver writes it.

Naive datetimes are refused: a timestamp without a zone is ambiguous on a cluster.
"""

MicroTime = Annotated[
    AwareDatetime,
    AfterValidator(_to_utc),
    PlainSerializer(_format_micro_time, return_type=str, when_used="json"),
]
"""``metav1.MicroTime``: RFC 3339 in UTC with exactly six fractional digits.

The apiserver parses MicroTime with a fixed six-digit layout, so the digits are always written.
"""

RawObject = dict[str, Any]
"""A JSON object kept as data (``managedFields``, ``affinity``): rarely read, or typed elsewhere."""
