"""The pydantic → structural schema mappings, one by one, and the errors for what has none."""

# ruff: noqa: RUF012 - pydantic copies mutable defaults
from __future__ import annotations

import enum
from datetime import date, datetime, timedelta
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from crdkit.crd import (
    Duration,
    EmbeddedResource,
    IntOrString,
    ListMapKeys,
    MapType,
    Nullable,
    PreserveUnknownFields,
    SchemaError,
    Schemaless,
    XValidation,
    crd_schema,
    immutable,
    schema_violations,
    structural_schema,
)
from crdkit.resources import ApiModel, CustomResource

# controller-gen's spelling, anyOf included (without it the apiserver takes 4.0000000001).
INT_OR_STRING = {
    "x-kubernetes-int-or-string": True,
    "anyOf": [{"type": "integer"}, {"type": "string"}],
}


def field_schema(annotation: Any, **field: Any) -> dict[str, Any]:
    """The structural schema of one field ``x`` of that type."""
    model = type("M", (ApiModel,), {"__annotations__": {"x": annotation}, **field})
    return structural_schema(model)["properties"]["x"]


def test_scalars() -> None:
    assert field_schema(str) == {"type": "string"}
    assert field_schema(int) == {"type": "integer"}
    assert field_schema(float) == {"type": "number"}
    assert field_schema(bool) == {"type": "boolean"}


def test_refs_are_inlined_and_titles_dropped() -> None:
    class Inner(ApiModel):
        """Inner docs."""

        value: int = Field(title="V", examples=[1], description="the value")

    schema = field_schema(Inner)
    assert schema == {
        "type": "object",
        "description": "Inner docs.",
        "properties": {"value": {"type": "integer", "description": "the value"}},
        "required": ["value"],
    }


def test_optional_defaulting_to_none_is_not_nullable_unless_marked() -> None:
    assert field_schema(int | None, x=None) == {"type": "integer"}
    assert field_schema(Annotated[int | None, Nullable()], x=None) == {
        "type": "integer",
        "nullable": True,
    }


def test_optional_without_a_default_is_required_and_nullable() -> None:
    # pydantic requires the key and accepts null: so does the CRD (see _Converter._union).
    class Inner(ApiModel):
        value: int

    class Holder(ApiModel):
        count: int | None
        inner: Inner | None
        either: int | str | None

    schema = structural_schema(Holder)
    assert schema["required"] == ["count", "either", "inner"]
    assert schema["properties"]["count"] == {"type": "integer", "nullable": True}
    assert schema["properties"]["inner"]["nullable"] is True
    assert schema["properties"]["either"] == {**INT_OR_STRING, "nullable": True}
    assert schema_violations(schema) == []


def test_optional_whose_absence_is_not_none_keeps_null() -> None:
    # Absent reads back as the default, so a null must be kept rather than defaulted.
    assert field_schema(int | None, x=5) == {"type": "integer", "default": 5, "nullable": True}
    assert field_schema(int | None, x=Field(default_factory=lambda: 5)) == {
        "type": "integer",
        "nullable": True,
    }
    # pydantic keeps None items and values, and so does the CRD.
    assert field_schema(list[int | None], x=[]) == {
        "type": "array",
        "items": {"type": "integer", "nullable": True},
        "default": [],
    }
    assert field_schema(dict[str, str | None])["additionalProperties"] == {
        "type": "string",
        "nullable": True,
    }


def test_a_model_default_keeps_the_nulls_the_schema_keeps() -> None:
    class Inner(ApiModel):
        count: int | None
        note: str | None = None

    assert field_schema(Inner, x=Inner(count=None))["default"] == {"count": None}


@pytest.mark.parametrize(
    ("annotation", "default", "held"),
    [
        (float, float("inf"), "inf"),
        (float, float("-inf"), "-inf"),
        (float, float("nan"), "nan"),
        (list[float], [1.0, float("nan")], "holds nan"),  # pydantic alone writes [1.0, null]
        (dict[str, float], {"k": float("-inf")}, "holds -inf"),
        (dict[str, list[float]], {"k": [float("inf")]}, "holds inf"),
        (float | None, float("inf"), "inf"),
    ],
)
def test_non_finite_defaults_are_errors_naming_the_field(
    annotation: Any, default: Any, held: str
) -> None:
    with pytest.raises(SchemaError, match=rf"^M: field \.x: default .*{held}.*not finite"):
        field_schema(annotation, x=default)


def test_non_finite_default_inside_a_nested_model_names_the_path() -> None:
    class Limits(ApiModel):
        ceiling: float = 1.0

    class Spec(ApiModel):
        limits: Limits = Limits(ceiling=float("inf"))

    with pytest.raises(SchemaError, match=r"field \.spec\.limits: default \{'ceiling': inf\}"):
        field_schema(Spec, x=Field(alias="spec"))


def test_integer_defaults_must_fit_int64() -> None:
    assert field_schema(int, x=2**63 - 1)["default"] == 2**63 - 1
    with pytest.raises(SchemaError, match=r"field \.x: default 9223372036854775808 does not fit"):
        field_schema(int, x=2**63)
    with pytest.raises(SchemaError, match="default -9223372036854775809 does not fit"):
        field_schema(dict[str, list[int]], x={"k": [-(2**63) - 1]})
    # A number field's default is decoded as a float: no int64 limit applies.
    assert field_schema(float, x=2**70)["default"] == 2**70


@pytest.mark.parametrize(
    ("annotation", "reason"),
    [
        (Annotated[int, Field(le=2**63 - 1)], "maximum 9223372036854775807 is out of the range"),
        (Annotated[int, Field(ge=-(2**63))], "minimum -9223372036854775808 is out of the range"),
        (Annotated[int, Field(lt=2**64)], "exclusiveMaximum 18446744073709551616 is out of"),
        (Annotated[int, Field(multiple_of=2**64)], "multipleOf 18446744073709551616 is out of"),
        (Annotated[int, Field(le=10**400)], "maximum 10{400} is out of the range"),
        (
            Annotated[int, Field(le=2**53 + 1)],
            "maximum 9007199254740993 cannot be held exactly .* check 9007199254740992",
        ),
        (Annotated[float, Field(le=1e300)], "maximum 1e\\+300 is out of the range"),
        (Annotated[float, Field(ge=float("nan"))], "minimum nan is not finite"),
        (Annotated[str, Field(max_length=2**63)], "maxLength 9223372036854775808 does not fit"),
    ],
)
def test_bounds_the_apiserver_cannot_hold_are_errors(annotation: Any, reason: str) -> None:
    with pytest.raises(SchemaError, match=rf"^M: field \.x: {reason}"):
        field_schema(annotation, x=0 if "str" not in str(annotation) else "")


def test_bounds_within_what_the_apiserver_holds_are_kept() -> None:
    limit = 2**63 - 1024  # the largest float64 below 2**63
    assert field_schema(Annotated[int, Field(ge=-limit, le=limit)]) == {
        "type": "integer",
        "minimum": -limit,
        "maximum": limit,
    }
    assert field_schema(Annotated[int, Field(le=2**62)])["maximum"] == 2**62
    # pydantic drops infinite bounds itself: every finite value passes both.
    assert field_schema(Annotated[float, Field(le=float("inf"))]) == {"type": "number"}


def test_literal_enum_and_const() -> None:
    class Colour(enum.Enum):
        RED = "red"
        BLUE = "blue"

    assert field_schema(Literal["a", "b"]) == {"type": "string", "enum": ["a", "b"]}
    assert field_schema(Literal["only"]) == {"type": "string", "enum": ["only"]}
    assert field_schema(Colour) == {"type": "string", "enum": ["red", "blue"]}
    assert field_schema(Literal[1, 2]) == {"type": "integer", "enum": [1, 2]}


def test_mixed_literal_is_an_error() -> None:
    with pytest.raises(SchemaError, match="enum mixing value types"):
        field_schema(Literal[1, "a"])


def test_maps_and_unknown_fields() -> None:
    assert field_schema(dict[str, int]) == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }
    assert field_schema(dict[str, Any]) == {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
    }
    assert field_schema(Any, x=None) == {"x-kubernetes-preserve-unknown-fields": True}

    class Open(ApiModel):
        model_config = ConfigDict(extra="allow")
        a: int

    assert field_schema(Open)["x-kubernetes-preserve-unknown-fields"] is True


def test_closed_models_drop_additional_properties_false() -> None:
    class Closed(BaseModel):
        model_config = ConfigDict(extra="forbid")
        a: int

    assert "additionalProperties" not in field_schema(Closed)


def test_bounds_use_openapi_3_0_exclusive_flags() -> None:
    assert field_schema(Annotated[float, Field(gt=0, lt=1)]) == {
        "type": "number",
        "minimum": 0,
        "exclusiveMinimum": True,
        "maximum": 1,
        "exclusiveMaximum": True,
    }
    assert field_schema(Annotated[int, Field(ge=1, le=9, multiple_of=3)]) == {
        "type": "integer",
        "minimum": 1,
        "maximum": 9,
        "multipleOf": 3,
    }


def test_lengths_items_and_sizes() -> None:
    assert field_schema(Annotated[str, Field(min_length=1, max_length=5)]) == {
        "type": "string",
        "minLength": 1,
        "maxLength": 5,
    }
    assert field_schema(Annotated[list[int], Field(min_length=1, max_length=2)]) == {
        "type": "array",
        "items": {"type": "integer"},
        "minItems": 1,
        "maxItems": 2,
    }
    assert field_schema(Annotated[dict[str, str], Field(max_length=2)])["maxProperties"] == 2
    assert field_schema(list[Annotated[int, Field(ge=0)]])["items"] == {
        "type": "integer",
        "minimum": 0,
    }


def test_sets_and_tuples() -> None:
    assert field_schema(set[str]) == {
        "type": "array",
        "items": {"type": "string"},
        "x-kubernetes-list-type": "set",
    }
    assert field_schema(tuple[int, int]) == {
        "type": "array",
        "items": {"type": "integer"},
        "minItems": 2,
        "maxItems": 2,
    }
    assert field_schema(tuple[int, ...]) == {"type": "array", "items": {"type": "integer"}}


def test_mixed_tuple_is_an_error_naming_model_and_path() -> None:
    class Spec(ApiModel):
        pair: tuple[int, str]

    with pytest.raises(SchemaError, match=r"^Spec: field \.pair: a tuple of mixed types"):
        structural_schema(Spec)


def test_time_types() -> None:
    assert field_schema(datetime) == {"type": "string", "format": "date-time"}
    assert field_schema(date) == {"type": "string", "format": "date"}
    assert field_schema(Duration) == {"type": "string", "format": "duration"}


def test_api_model_timedelta_is_a_duration_and_plain_model_timedelta_an_error() -> None:
    assert field_schema(timedelta) == {"type": "string", "format": "duration"}

    class Plain(BaseModel):
        wait: timedelta

    with pytest.raises(SchemaError, match=r"field \.wait: .*crdkit\.crd\.Duration"):
        structural_schema(Plain)


def test_int_or_string() -> None:
    assert field_schema(IntOrString) == INT_OR_STRING
    assert field_schema(int | str) == INT_OR_STRING


def test_unions_of_other_scalars_are_errors() -> None:
    with pytest.raises(SchemaError, match="a union of integer and number"):
        field_schema(int | float)


def test_discriminated_union_is_hoisted_with_a_rule() -> None:
    class A(ApiModel):
        type: Literal["a"]
        x: int

    class B(ApiModel):
        type: Literal["b"]
        y: str = "q"

    schema = field_schema(Annotated[A | B, Field(discriminator="type")])
    assert schema["properties"] == {
        "type": {"type": "string", "enum": ["a", "b"]},
        "x": {"type": "integer"},
        "y": {"type": "string"},  # default dropped: it would land on A objects too
    }
    assert schema["required"] == ["type"]
    [rule] = schema["x-kubernetes-validations"]
    assert rule["rule"] == (
        "(self.type == 'a' && has(self.x) && !has(self.y)) || (self.type == 'b' && !has(self.x))"
    )


def test_plain_union_of_models_needs_exactly_one_variant() -> None:
    class ByName(ApiModel):
        name: str

    class ByUid(ApiModel):
        uid: str

    schema = field_schema(ByName | ByUid)
    assert set(schema["properties"]) == {"name", "uid"}
    assert schema["x-kubernetes-validations"][0]["rule"] == (
        "(has(self.name) && !has(self.uid) ? 1 : 0) + (has(self.uid) && !has(self.name) ? 1 : 0)"
        " == 1"
    )


def test_union_variants_with_conflicting_fields_are_errors() -> None:
    class A(ApiModel):
        size: int

    class B(ApiModel):
        size: str

    with pytest.raises(SchemaError, match=r"field \.x\.size: union variants A and B"):
        field_schema(A | B)


def test_recursive_models_are_errors_unless_schemaless() -> None:
    class Node(ApiModel):
        children: list[Node] = []

    with pytest.raises(SchemaError, match=r"field \.x\.children\[\*\]: recursive model Node"):
        field_schema(Node)
    assert field_schema(Annotated[Node, Schemaless()]) == {
        "x-kubernetes-preserve-unknown-fields": True
    }


def test_markers_reach_the_schema() -> None:
    rule = XValidation("self > 0", message="positive", reason="FieldValueInvalid")
    assert field_schema(Annotated[int, rule]) == {
        "type": "integer",
        "x-kubernetes-validations": [
            {"rule": "self > 0", "message": "positive", "reason": "FieldValueInvalid"}
        ],
    }
    assert field_schema(Annotated[str, immutable()])["x-kubernetes-validations"] == [
        {"rule": "self == oldSelf", "message": "field is immutable"}
    ]
    assert (
        field_schema(Annotated[dict[str, str], MapType("atomic")])["x-kubernetes-map-type"]
        == "atomic"
    )
    embedded = field_schema(Annotated[dict[str, Any], EmbeddedResource()])
    assert embedded["x-kubernetes-embedded-resource"] is True

    class Port(ApiModel):
        name: str
        port: int

    listed = field_schema(Annotated[list[Port], ListMapKeys("name")])
    assert listed["x-kubernetes-list-type"] == "map"
    assert listed["x-kubernetes-list-map-keys"] == ["name"]


def test_preserve_unknown_fields_on_a_typed_map_is_an_error() -> None:
    with pytest.raises(SchemaError, match="typed map"):
        field_schema(Annotated[dict[str, str], PreserveUnknownFields()])


def test_type_level_rules_come_from_the_class_keyword() -> None:
    class Range(ApiModel, validations=[XValidation("self.lo <= self.hi")]):
        lo: int
        hi: int

    assert field_schema(Range)["x-kubernetes-validations"] == [{"rule": "self.lo <= self.hi"}]


def test_defaults_are_kept_without_nulls() -> None:
    class Inner(ApiModel):
        a: int = 1
        b: str | None = None

    assert field_schema(Inner, x=Inner())["default"] == {"a": 1}
    assert field_schema(list[str], x=["a"])["default"] == ["a"]


def test_patterns_must_be_re2() -> None:
    # pydantic's default regex engine is RE2-like already; Python's re is not.
    with pytest.raises(SchemaError, match="look-ahead"):
        field_schema(
            Annotated[str, Field(pattern=r"^(?=a)a$")],
            model_config=ConfigDict(regex_engine="python-re"),
        )


def test_unknown_keywords_are_errors() -> None:
    with pytest.raises(SchemaError, match="keyword 'x-custom'"):
        field_schema(int, x=Field(0, json_schema_extra={"x-custom": 1}))


def test_map_key_constraints_are_errors() -> None:
    with pytest.raises(SchemaError, match="map keys"):
        field_schema(dict[Annotated[str, Field(max_length=3)], int])


class Spec(ApiModel):
    size: int


class Thing(CustomResource, group="things.example.com", version="v1"):
    """A thing."""

    spec: Spec


def test_crd_schema_root() -> None:
    schema = crd_schema(Thing)
    assert schema["type"] == "object"
    assert schema["description"] == "A thing."
    assert schema["properties"]["metadata"] == {"type": "object"}
    assert schema["properties"]["apiVersion"]["type"] == "string"
    assert schema["required"] == ["spec"]
    assert "x-kubernetes-preserve-unknown-fields" not in schema
    assert schema_violations(schema) == []


def test_crd_schema_errors_name_class_and_version() -> None:
    class Bad(CustomResource, group="things.example.com", version="v2"):
        spec: tuple[int, str]

    with pytest.raises(SchemaError, match=r"^Bad \(things\.example\.com/v2\): field \.spec"):
        crd_schema(Bad)
