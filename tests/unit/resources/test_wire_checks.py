"""ApiModel reads JSON as the apiserver does: no type conversions, nulls pruned where it prunes.

Each document here was sent to a real apiserver for a CRD of the same types (see
``tests/integration/crd/test_crd_differential.py``, which checks the same on drawn documents).
"""

# ruff: noqa: RUF012 - pydantic copies mutable defaults
from __future__ import annotations

import enum
import json
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from crdkit.resources import ApiModel, Duration, IntOrString, Quantity, Time


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 3


class Colour(enum.Enum):
    RED = "red"


class Inner(ApiModel):
    name: str = "inner"


class Scalars(ApiModel):
    count: int | None = None
    ratio: float | None = None
    enabled: bool | None = None
    name: str | None = None
    level: Level | None = None
    colour: Colour | None = None
    choice: Literal[1, 3] | None = None
    tags: list[Literal[1, 3]] = []
    since: Time | None = None
    timeout: Duration | None = None
    cpu: Quantity | None = None
    port: IntOrString | None = None


def _both(document: dict[str, Any]) -> list[BaseModel | str]:
    """The model from a dict and from JSON bytes, or the first error's message."""
    out: list[BaseModel | str] = []
    try:
        out.append(Scalars.model_validate(document))
    except ValidationError as error:
        out.append(error.errors()[0]["msg"])
    try:
        out.append(Scalars.model_validate_json(json.dumps(document)))
    except ValidationError as error:
        out.append(error.errors()[0]["msg"])
    return out


REFUSED = [
    {"count": "3"},
    {"count": True},
    {"count": 1.5},
    {"ratio": "1.5"},
    {"ratio": True},
    {"enabled": "true"},
    {"enabled": 1},
    {"name": 3},
    {"name": False},
    {"level": "1"},
    {"level": True},
    {"choice": "1"},
    {"choice": True},
    {"tags": [True]},
    {"since": 1_700_000_000},
    {"port": True},
    {"port": 1.5},
]


@pytest.mark.parametrize("document", REFUSED, ids=json.dumps)
def test_a_value_of_the_wrong_json_type_is_refused(document: dict[str, Any]) -> None:
    for result in _both(document):
        assert isinstance(result, str), f"{document} accepted: {result}"


ACCEPTED = [
    ({"count": 3}, "count", 3),
    ({"count": 3.0}, "count", 3),  # the apiserver takes an integral number as an integer
    ({"ratio": 3}, "ratio", 3.0),
    ({"level": 3}, "level", Level.HIGH),
    ({"level": 3.0}, "level", Level.HIGH),
    ({"colour": "red"}, "colour", Colour.RED),
    ({"choice": 3}, "choice", 3),
    ({"since": "2024-05-01T10:00:00Z"}, "since", datetime(2024, 5, 1, 10, tzinfo=UTC)),
    ({"timeout": "1m30s"}, "timeout", timedelta(seconds=90)),
    ({"cpu": 2}, "cpu", "2"),
    ({"cpu": "500m"}, "cpu", "500m"),
    ({"port": "http"}, "port", "http"),
    ({"port": 80}, "port", 80),
]


@pytest.mark.parametrize(("document", "field", "value"), ACCEPTED, ids=lambda v: repr(v))
def test_values_the_apiserver_accepts_are_read(
    document: dict[str, Any], field: str, value: Any
) -> None:
    for result in _both(document):
        assert isinstance(result, Scalars), result
        assert getattr(result, field) == value


def test_python_construction_is_as_strict_as_json() -> None:
    with pytest.raises(ValidationError, match="count"):
        Scalars(count="3")
    with pytest.raises(ValidationError, match="enabled"):
        Scalars(enabled=1)
    # Members and Python values of the right type are taken as they are.
    assert Scalars(level=Level.LOW, colour=Colour.RED, ratio=2).ratio == 2.0


class Tagged(ApiModel):
    kind: Literal[1, 2] = 1


def test_an_integer_literal_field_names_itself_in_the_error() -> None:
    with pytest.raises(ValidationError, match="kind: Input should be a valid integer"):
        Tagged.model_validate({"kind": True})
    assert Tagged.model_validate({"kind": 2.0}).kind == 2


class One(ApiModel):
    tag: Literal[1]
    one: int = 0


class Two(ApiModel):
    tag: Literal[2]
    two: int = 0


class Either(ApiModel):
    choice: Annotated[One | Two, Field(discriminator="tag")]


def test_an_integer_tag_of_a_discriminated_union_is_strict_too() -> None:
    assert isinstance(Either.model_validate({"choice": {"tag": 2}}).choice, Two)
    with pytest.raises(ValidationError):
        Either.model_validate({"choice": {"tag": "2"}})


class Defaults(ApiModel):
    replicas: int = 1
    image: str = "busybox"
    args: list[str] = ["--serve"]
    inner: Inner = Inner()
    made: list[int] = Field(default_factory=lambda: [7])
    optional: int | None = None
    kept: int | None = 5  # nullable in the CRD: the apiserver keeps the null
    limits: dict[str, int] = {}
    notes: dict[str, str | None] = {}
    required: int


@pytest.mark.parametrize(
    "load",
    [Defaults.model_validate, lambda d: Defaults.model_validate_json(json.dumps(d))],
    ids=["dict", "json"],
)
def test_null_on_a_defaulted_field_reads_as_the_default(load: Any) -> None:
    document = {
        "replicas": None,
        "image": None,
        "args": None,
        "inner": None,
        "made": None,
        "optional": None,
        "kept": None,
        "required": 2,
    }
    model = load(document)
    assert (model.replicas, model.image, model.args) == (1, "busybox", ["--serve"])
    assert (model.inner, model.made, model.optional, model.kept) == (Inner(), [7], None, None)


def test_null_is_still_refused_where_there_is_no_default() -> None:
    with pytest.raises(ValidationError, match="required"):
        Defaults.model_validate({"required": None})


def test_null_map_values_are_dropped_unless_the_values_are_nullable() -> None:
    model = Defaults.model_validate(
        {"required": 1, "limits": {"a": None, "b": 2}, "notes": {"a": None}}
    )
    assert model.limits == {"b": 2}
    assert model.notes == {"a": None}


def test_null_list_items_are_refused() -> None:
    class Items(ApiModel):
        sizes: list[int] = []

    with pytest.raises(ValidationError, match=r"sizes\.1"):
        Items.model_validate({"sizes": [1, None]})


class Plain(BaseModel):
    count: int = 0


class HoldsPlain(ApiModel):
    plain: Plain = Plain()


def test_plain_pydantic_models_inside_keep_their_own_rules() -> None:
    assert HoldsPlain.model_validate({"plain": {"count": "3"}}).plain.count == 3


class S3(ApiModel):
    kind: Literal["s3"]
    bucket: str


class Git(ApiModel):
    kind: Literal["git"]
    url: str
    revision: str | None = None


class Source(ApiModel):
    tagged: Annotated[S3 | Git, Field(discriminator="kind")] | None = None
    untagged: S3 | Git | None = None


@pytest.mark.parametrize("field", ["tagged", "untagged"])
def test_a_union_refuses_fields_of_another_variant_than_the_one_given(field: str) -> None:
    # The CRD holds both variants' fields in one object, with a CEL rule that only one
    # variant's are set: {"kind": "s3", "bucket": "b", "revision": "x"} is refused there.
    with pytest.raises(ValidationError, match="revision: not a field of S3"):
        Source.model_validate({field: {"kind": "s3", "bucket": "b", "revision": "x"}})
    # A null is pruned by the apiserver before its rules run.
    source = Source.model_validate({field: {"kind": "s3", "bucket": "b", "revision": None}})
    assert getattr(source, field) == S3(kind="s3", bucket="b")
    git = Source.model_validate({field: {"kind": "git", "url": "u", "revision": "x"}})
    assert getattr(git, field) == Git(kind="git", url="u", revision="x")


class Closed(ApiModel):
    model_config = ConfigDict(extra="forbid")

    name: str


def test_a_closed_model_drops_an_undeclared_null_as_the_apiserver_does() -> None:
    assert Closed.model_validate({"name": "a", "labels": None}) == Closed(name="a")
    with pytest.raises(ValidationError, match="labels"):
        Closed.model_validate({"name": "a", "labels": {}})


class Tags(ApiModel):
    tags: set[str] = set()


def test_a_set_refuses_a_repeated_item_as_the_apiserver_does() -> None:
    with pytest.raises(ValidationError, match="must not repeat"):
        Tags.model_validate({"tags": ["a", "a"]})
    assert Tags.model_validate({"tags": ["a", "b"]}).tags == {"a", "b"}


def test_a_whole_float_from_2_53_on_is_not_an_integer() -> None:
    assert Scalars.model_validate({"count": 2.0**53 - 2}).count == 2**53 - 2
    with pytest.raises(ValidationError, match="count"):
        Scalars.model_validate({"count": 2.0**53})


def test_an_integer_beyond_int64_is_refused_as_the_apiserver_does() -> None:
    class Wide(ApiModel):
        n: int = 0
        either: int | str = 0

    assert Wide.model_validate({"n": 2**63 - 1, "either": -(2**63)}).n == 2**63 - 1
    for field in ("n", "either"):
        for value in (2**63, -(2**63) - 1):
            with pytest.raises(ValidationError, match="outside the int64 range"):
                Wide.model_validate({field: value})
