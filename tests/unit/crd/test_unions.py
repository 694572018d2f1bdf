import pytest

from crdkit.crd import SchemaError
from crdkit.crd.unions import merge_variants


def error(where: str, why: str) -> SchemaError:
    return SchemaError("M", f".u{where}", why)


def test_integer_and_boolean_tags_are_cel_literals() -> None:
    variants = [
        ("One", {"properties": {"v": {"type": "integer", "enum": [1]}, "a": {"type": "string"}},
                 "required": ["a"]}),
        ("Two", {"properties": {"v": {"type": "integer", "enum": [2]}}}),
    ]  # fmt: skip
    merged = merge_variants(variants, "v", error)
    assert merged["properties"]["v"] == {"type": "integer", "enum": [1, 2]}
    assert merged["required"] == ["v"]
    assert merged["x-kubernetes-validations"][0]["rule"] == (
        "(self.v == 1 && has(self.a)) || (self.v == 2 && !has(self.a))"
    )


def test_conflicting_field_names_the_path_and_variants() -> None:
    variants = [
        ("A", {"properties": {"x": {"type": "string"}}}),
        ("B", {"properties": {"x": {"type": "integer"}}}),
    ]
    with pytest.raises(SchemaError, match=r"field \.u\.x: union variants A and B"):
        merge_variants(variants, None, error)


def test_descriptions_do_not_make_a_conflict() -> None:
    variants = [
        ("A", {"properties": {"x": {"type": "string", "description": "a"}}}),
        ("B", {"properties": {"x": {"type": "string", "description": "b"},
                              "y": {"type": "integer"}}}),
    ]  # fmt: skip
    merged = merge_variants(variants, None, error)
    assert set(merged["properties"]) == {"x", "y"}
