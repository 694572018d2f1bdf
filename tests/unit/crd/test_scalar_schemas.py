"""The CRD schemas of Quantity, Int32/Int64, Bytes, int-or-string rules and Format("int32")."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field, ValidationError

from crdkit.crd import (
    Bytes,
    Format,
    Int32,
    Int64,
    IntOrString,
    SchemaError,
    XValidation,
    crd_schema,
    structural_schema,
)
from crdkit.resources import ApiModel, CustomResource, Quantity
from crdkit.resources.scalars import QUANTITY_PATTERN


def field_schema(annotation: Any, **field: Any) -> dict[str, Any]:
    model = type("M", (ApiModel,), {"__annotations__": {"x": annotation}, **field})
    return structural_schema(model)["properties"]["x"]


def test_quantity_is_int_or_string_with_the_quantity_pattern() -> None:
    # controller-gen's schema for resource.Quantity, key for key.
    assert field_schema(Quantity) == {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "pattern": QUANTITY_PATTERN,
        "x-kubernetes-int-or-string": True,
    }
    assert field_schema(dict[str, Quantity])["additionalProperties"]["pattern"] == QUANTITY_PATTERN


def test_integer_formats() -> None:
    assert field_schema(Int32) == {"type": "integer", "format": "int32"}
    assert field_schema(Int64) == {"type": "integer", "format": "int64"}
    assert field_schema(Annotated[int, Format("int32")]) == {"type": "integer", "format": "int32"}


def test_format_int32_marker_enforces_the_range() -> None:
    model = type("M", (ApiModel,), {"__annotations__": {"x": Annotated[int, Format("int32")]}})
    assert model.model_validate({"x": 2**31 - 1}).x == 2**31 - 1
    with pytest.raises(ValidationError, match="outside the int32 range"):
        model.model_validate({"x": 2**40})


def test_bytes_are_strings_of_format_byte() -> None:
    assert field_schema(Bytes) == {"type": "string", "format": "byte"}
    assert field_schema(bytes) == {"type": "string", "format": "byte"}
    assert field_schema(bytes, x=b"hi") == {"type": "string", "format": "byte", "default": "aGk="}
    assert field_schema(list[bytes])["items"] == {"type": "string", "format": "byte"}


def test_bytes_of_a_plain_model_are_refused() -> None:
    class Plain(BaseModel):
        data: bytes

    with pytest.raises(SchemaError, match=r"field \.data: bytes of a plain pydantic model"):
        structural_schema(Plain)


def test_a_duration_default_is_written_as_go_writes_it() -> None:
    assert field_schema(timedelta, x=timedelta(hours=1, minutes=30))["default"] == "1h30m0s"


def test_cel_rules_on_int_or_string_are_kept() -> None:
    rule = XValidation("type(self) == int ? self > 0 : self.endsWith('%')", message="m")
    expected = [{"rule": rule.rule, "message": "m"}]
    either = {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert field_schema(Annotated[IntOrString, rule]) == {
        "x-kubernetes-int-or-string": True,
        **either,
        "x-kubernetes-validations": expected,
    }
    assert field_schema(Annotated[int | str, rule]) == {
        "x-kubernetes-int-or-string": True,
        **either,
        "x-kubernetes-validations": expected,
    }


def test_a_field_with_a_cel_rule_refuses_whole_floats() -> None:
    # The apiserver takes 4.0 for an integer, except where a CEL rule must see the value.
    ruled = Annotated[IntOrString, XValidation("type(self) == int ? self > 0 : true")]
    model = type("M", (ApiModel,), {"__annotations__": {"x": ruled}})
    model.model_validate({"x": 4})
    with pytest.raises(ValidationError, match="a field with a CEL rule must be sent a whole"):
        model.model_validate({"x": 4.0})
    number = Annotated[float, XValidation("self > 0.0")]
    floats = type("F", (ApiModel,), {"__annotations__": {"x": number}})
    assert floats.model_validate({"x": 4.0}).x == 4.0  # a number field keeps its floats


class BoundedSizes(ApiModel):
    optional: Int32 | None = Field(default=None, ge=0)
    plain: Int64 = Field(default=1, ge=0, le=10)
    formatted: Annotated[int, Format("int32")] | None = Field(default=None, ge=0)
    items: list[Annotated[Int32, Field(gt=0)]] = Field(default_factory=list)


class BoundedSizesResource(CustomResource, group="bounds.example.com", version="v1"):
    spec: BoundedSizes


def test_bounds_on_sized_integers_reach_the_crd() -> None:
    # pydantic enforces these bounds; a CRD without them would be laxer than the model
    properties = crd_schema(BoundedSizesResource)["properties"]["spec"]["properties"]
    assert properties["optional"] == {"type": "integer", "format": "int32", "minimum": 0}
    assert properties["plain"] == {
        "type": "integer",
        "format": "int64",
        "default": 1,
        "minimum": 0,
        "maximum": 10,
    }
    assert properties["formatted"]["minimum"] == 0
    assert properties["items"]["items"] == {
        "type": "integer",
        "format": "int32",
        "minimum": 0,
        "exclusiveMinimum": True,
    }
