"""Two fields of one model with the same JSON name: an error, never a silent merge.

pydantic's JSON schema keeps one property per JSON name, so ``foo_bar`` (camelCased to
``fooBar`` by ``ApiModel``) and a field with the explicit alias ``fooBar`` become one property
of the CRD, while pydantic fills both fields from that one key and writes the key twice. No
CRD can describe that model, so the clash is reported with both fields named.
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Union, get_args, get_origin

from pydantic import AliasChoices, AliasPath, BaseModel

from crdkit.crd.errors import SchemaError

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

__all__ = ["check_json_names"]


def json_name(name: str, field: FieldInfo) -> str:
    """The property name pydantic's validation JSON schema gives this field."""
    alias = field.validation_alias
    if isinstance(alias, str):
        return alias
    if isinstance(alias, AliasChoices):
        # As pydantic does: the first choice that is a plain key names the property (a bare
        # AliasPath does not: the property keeps the field's alias or name).
        for choice in alias.choices:
            if isinstance(choice, str):
                return choice
            if isinstance(choice, AliasPath) and len(choice.path) == 1:
                key = choice.path[0]
                if isinstance(key, str):
                    return key
    return field.alias or name


def _models_in(annotation: Any, suffix: str = "") -> Iterator[tuple[type[BaseModel], str]]:
    """The models a field's type holds, each with its path suffix (``[*]`` per container)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation, suffix
        return
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Annotated:
        yield from _models_in(args[0], suffix)
    elif origin is Union or origin is types.UnionType:
        for arg in args:
            yield from _models_in(arg, suffix)
    elif isinstance(origin, type) and issubclass(origin, Mapping):
        if len(args) == 2:
            yield from _models_in(args[1], f"{suffix}[*]")
    elif origin is not None:  # list, set, tuple, Sequence, ...: items
        for arg in args:
            if arg is not Ellipsis:
                yield from _models_in(arg, f"{suffix}[*]")


def check_json_names(model: type[BaseModel], label: str) -> None:
    """Raise ``SchemaError`` at the first JSON name two fields of one model share."""
    seen: set[type[BaseModel]] = set()

    def visit(cls: type[BaseModel], path: str) -> None:
        if cls in seen:  # each model once; this also ends recursion
            return
        seen.add(cls)
        owners: dict[str, str] = {}
        for name, field in cls.model_fields.items():
            key = json_name(name, field)
            if key in owners:
                raise SchemaError(
                    label,
                    f"{path}.{key}",
                    f"fields {owners[key]} and {name} of {cls.__name__} both have the JSON name "
                    f"{key!r}: pydantic reads both from that one key and a CRD can declare it "
                    "only once; rename one or give it another alias",
                )
            owners[key] = name
            for inner, suffix in _models_in(field.annotation):
                visit(inner, f"{path}.{key}{suffix}")

    visit(model, "")
