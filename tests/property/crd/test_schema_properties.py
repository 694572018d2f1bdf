"""Invariants of the converter over randomly built models: every representable model gives a
schema that passes the structural checker, names every field, and keeps its defaults valid."""

from __future__ import annotations

import itertools
from typing import Annotated, Any, Literal, Optional

from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field, create_model

from crdkit.crd import schema_violations, structural_schema
from crdkit.crd.structural import value_problem
from crdkit.crd.types import format_duration, parse_duration
from crdkit.resources import ApiModel

_NAMES = itertools.count()  # pydantic needs distinct model names to tell their schemas apart
_SCALARS: list[Any] = [
    str,
    int,
    float,
    bool,
    Annotated[int, Field(ge=0, le=10)],
    Annotated[str, Field(max_length=5, pattern=r"^[a-z]*$")],
    Literal["a", "b"],
    int | str,
]


def _types(depth: int) -> st.SearchStrategy[Any]:
    scalar = st.sampled_from(_SCALARS)
    if depth == 0:
        return scalar
    inner = _types(depth - 1)
    return st.one_of(
        scalar,
        inner.map(lambda t: list[t]),  # type: ignore[valid-type]
        inner.map(lambda t: dict[str, t]),  # type: ignore[valid-type]
        inner.map(lambda t: Optional[t]),  # noqa: UP045 - built dynamically
        _models(depth - 1),
    )


@st.composite
def _models(draw: st.DrawFn, depth: int) -> type[ApiModel]:
    names = draw(st.lists(st.from_regex(r"\A[a-z][a-z0-9]{0,6}\Z"), min_size=1, max_size=4,
                          unique=True))  # fmt: skip
    fields = {name: (draw(_types(depth)), ...) for name in names}
    return create_model(f"M{next(_NAMES)}", __base__=ApiModel, **fields)  # type: ignore[call-overload, no-any-return]


@given(_models(2))
def test_every_generated_schema_is_structural(model: type[ApiModel]) -> None:
    schema = structural_schema(model)
    wrapped = {"type": "object", "properties": {"spec": schema}}
    assert schema_violations(wrapped) == []
    assert set(schema["properties"]) == {f.alias or n for n, f in model.model_fields.items()}


@given(st.integers(0, 10), st.lists(st.sampled_from(["a", "b"]), max_size=3))
def test_defaults_validate_against_their_schema(size: int, tags: list[str]) -> None:
    model = create_model(
        "WithDefaults",
        __base__=ApiModel,
        size=(Annotated[int, Field(ge=0, le=10)], size),
        tags=(list[Literal["a", "b"]], tags),
    )
    schema = structural_schema(model)
    for name, prop in schema["properties"].items():
        assert value_problem(prop["default"], prop, name) is None


@given(st.timedeltas(min_value=-parse_duration("10000h"), max_value=parse_duration("10000h")))
def test_duration_round_trip(value: Any) -> None:
    assert parse_duration(format_duration(value)) == value
