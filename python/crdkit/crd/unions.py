"""Unions of models → one structural object.

A structural schema cannot say "one of these shapes" for objects (``oneOf`` may only hold value
checks), so the variants are merged: every variant's fields become optional properties of one
object, a discriminator's values become one ``enum``, and a CEL rule restores the union's
meaning, that the fields set are exactly those of one variant.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from crdkit.crd.cel import cel_field, cel_string
from crdkit.crd.errors import SchemaError

__all__ = ["merge_variants"]

Schema = dict[str, Any]
ErrorAt = Callable[[str, str], SchemaError]


def _cel_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return cel_string(value)
    return repr(value)


def _shape(schema: Schema) -> Schema:
    """A schema without documentation, for comparing what two variants say about a field."""
    return {
        k: _shape(v) if isinstance(v, dict) else v
        for k, v in schema.items()
        if k not in ("description", "default")
    }


def _implied_tag(variants: list[tuple[str, Schema]]) -> str | None:
    """The field every variant fixes to its own Literal values, if exactly one does.

    A callable ``Discriminator`` names no field in the JSON schema, but its variants still
    carry a tag (``kind: Literal["cat"] = "cat"``); without one the merge would refuse the
    tag's per-variant enums as conflicting types. Such a tag is then required, as a named
    discriminator's is: the callable needs it to choose.
    """
    shared = set.intersection(*(set(v["properties"]) for _, v in variants))
    candidates = []
    for prop in sorted(shared):
        enums = [v["properties"][prop].get("enum") for _, v in variants]
        if not all(enums):
            continue
        seen: list[Any] = [value for values in enums for value in values]
        if len(seen) == len({repr(value) for value in seen}):  # disjoint: each picks one variant
            candidates.append(prop)
    return candidates[0] if len(candidates) == 1 else None


def merge_variants(variants: list[tuple[str, Schema]], tag: str | None, error: ErrorAt) -> Schema:
    """One object schema for converted object variants ``(model name, schema)``.

    ``tag`` is the discriminator property, if any. ``error(relative_path, reason)`` builds the
    exception for a field two variants disagree on.
    """
    if tag is None:
        tag = _implied_tag(variants)
    properties: dict[str, Schema] = {}
    owner: dict[str, str] = {}
    for name, variant in variants:
        for prop, prop_schema in variant["properties"].items():
            if prop == tag:
                continue
            if prop in properties:
                if _shape(properties[prop]) != _shape(prop_schema):
                    raise error(
                        f".{prop}",
                        f"union variants {owner[prop]} and {name} give this field "
                        "conflicting types",
                    )
            else:
                properties[prop] = prop_schema
                owner[prop] = name
    required = set.intersection(*(set(v.get("required", [])) for _, v in variants))
    shared = set.intersection(*(set(v["properties"]) for _, v in variants))
    for prop in set(properties) - shared:
        # A default would make the apiserver set a field of one variant on every object.
        properties[prop] = {k: v for k, v in properties[prop].items() if k != "default"}
    conditions: list[str] = []
    tag_values: list[Any] = []
    for _, variant in variants:
        own = set(variant["properties"]) - {tag}
        parts: list[str] = []
        if tag is not None:
            values = variant["properties"].get(tag, {}).get("enum")
            if not values:
                raise error(f".{tag}", "a discriminator field must be a Literal")
            tag_values.extend(v for v in values if v not in tag_values)
            parts.append(" || ".join(f"self.{cel_field(tag)} == {_cel_literal(v)}" for v in values))
        parts += [
            f"has(self.{cel_field(p)})" for p in sorted(set(variant.get("required", [])) - {tag})
        ]
        parts += [f"!has(self.{cel_field(p)})" for p in sorted(set(properties) - own)]
        conditions.append(" && ".join(f"({p})" if "||" in p else p for p in parts) or "true")
    if tag is not None:
        tag_schema = dict(variants[0][1]["properties"][tag])
        tag_schema["enum"] = tag_values
        tag_schema.pop("default", None)
        properties = {tag: tag_schema, **properties}
        required.add(tag)  # pydantic needs the tag to pick a variant
        rule = " || ".join(f"({c})" for c in conditions)
    else:
        # Counting the variants that match, not [...].exists_one(v, v): building a list costs
        # the apiserver's estimate enough to refuse the rule under an unbounded list.
        rule = " + ".join(f"({c} ? 1 : 0)" for c in conditions) + " == 1"
    names = ", ".join(name for name, _ in variants)
    return {
        "type": "object",
        "properties": properties,
        **({"required": sorted(required)} if required else {}),
        "x-kubernetes-validations": [
            {"rule": rule, "message": f"exactly one of {names} must be given"}
        ],
    }
