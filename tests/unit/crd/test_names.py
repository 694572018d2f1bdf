"""Two fields of one model sharing a JSON name are an error naming both, at any depth."""

# ruff: noqa: RUF012 - pydantic copies mutable defaults

from __future__ import annotations

import pytest
from pydantic import AliasChoices, AliasPath, BaseModel, Field

from crdkit.crd import SchemaError, crd_schema, structural_schema
from crdkit.crd.names import check_json_names, json_name
from crdkit.resources import ApiModel, CustomResource


def test_json_name_is_the_property_pydantic_writes() -> None:
    class M(ApiModel):
        foo_bar: int = 0
        plain: int = Field(0, alias="explicit")
        choice: int = Field(0, validation_alias=AliasChoices(AliasPath("a", "b"), "second"))
        path: int = Field(0, validation_alias=AliasPath("single"))
        first: int = Field(0, validation_alias=AliasChoices(AliasPath("key"), "other"))

    names = {name: json_name(name, field) for name, field in M.model_fields.items()}
    assert names == {
        "foo_bar": "fooBar",
        "plain": "explicit",
        "choice": "second",
        "path": "path",
        "first": "key",
    }
    assert set(names.values()) == set(M.model_json_schema(by_alias=True)["properties"])


def test_a_camel_cased_name_and_an_explicit_alias_clash() -> None:
    class Spec(ApiModel):
        foo_bar: int = 0
        other: int = Field(0, alias="fooBar")

    # pydantic fills both fields from the one key; its schema has a single property.
    assert Spec.model_validate({"fooBar": 3}) == Spec(foo_bar=3, other=3)
    with pytest.raises(
        SchemaError,
        match=r"^Spec: field \.fooBar: fields foo_bar and other of Spec both have the JSON "
        r"name 'fooBar'",
    ):
        structural_schema(Spec)


def test_a_clash_deep_inside_names_the_model_and_the_path() -> None:
    class Port(BaseModel):
        number: int = 0
        port: int = Field(0, alias="number")

    class Spec(ApiModel):
        ports: dict[str, list[Port | None]] = {}

    class Service(CustomResource, group="names.example.com", version="v1"):
        spec: Spec

    with pytest.raises(
        SchemaError,
        match=r"^Service \(names\.example\.com/v1\): field \.spec\.ports\[\*\]\[\*\]\.number: "
        r"fields number and port of Port",
    ):
        crd_schema(Service)


def test_models_without_clashes_pass_including_recursive_ones() -> None:
    class Tree(ApiModel):
        value: int = 0
        children: list[Tree] = []

    Tree.model_rebuild()
    check_json_names(Tree, "Tree")  # ends: each model is visited once
