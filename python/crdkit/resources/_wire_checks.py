"""Make an ApiModel's core schema accept exactly the JSON the apiserver accepts.

pydantic's lax mode converts: ``"3"`` and ``True`` become the int 3 and 1, ``"true"`` a bool,
``1700000000`` a datetime. The apiserver checks the JSON type of a value against the CRD's
``type`` and converts nothing, except that an integral number (``3.0``) is an ``integer`` and
an integer is a ``number``. And before validating it drops a null from a field that is not
``nullable`` (then applies the field's default) and from a map whose values are not nullable.

``apply_wire_checks`` rewrites one node of a core schema to match, in place:

* ``int``: strict, after ``3.0`` is read as 3 (``1.5`` stays refused, and so does a whole
  float from 2**53 on, which the apiserver keeps a float);
* ``float``, ``bool``, ``str``: strict (a strict float still takes an int);
* ``Literal``, ``Enum``: a value of another JSON type than the members' is refused (lax mode
  matches ``True`` to ``1`` and ``"1"`` to an ``IntEnum``); members themselves pass;
* ``datetime``, ``date``: a JSON number is refused; strings are parsed as before;
* a field with a default whose type does not admit None: null reads as the default;
* ``dict[str, X]`` where X does not admit None: null values are dropped;
* a model with ``extra="forbid"``: an undeclared field that is null is dropped;
* ``set[X]``: a list repeating an item is refused (pydantic would drop the repeat).

``check_variant_fields`` makes a union of models refuse fields of another variant than the one
chosen: the CRD holds the union as one object with every variant's fields and a CEL rule that
only one variant's are set, where pydantic would ignore them.

Only plain types are made strict: durations (parsed from strings) and anything behind a
function validator other than a ``BeforeValidator`` (``Quantity``) keep their own parsing.
"""

from __future__ import annotations

import enum
from typing import Any

from pydantic_core import PydanticCustomError, PydanticKnownError, PydanticUseDefault, core_schema

__all__ = ["apply_wire_checks", "check_variant_fields"]

_WRAPPER = "crdkit-wire-check"  # on a wrapper: which check it adds
_CHECKED = "crdkit-wire-checked"  # on the node inside a wrapper, with the check: done
_STRICT = frozenset({"float", "bool", "str"})
_TYPE_ERRORS = {
    "boolean": "bool_type",
    "integer": "int_type",
    "number": "float_type",
    "string": "string_type",
}


def apply_wire_checks(schema: dict[str, Any]) -> bool:
    """Rewrite ``schema`` in place; whether it is a leaf needing no further walk.

    A model's schema is walked again inside every model that uses it, so each rewrite marks
    what it did and is done once.
    """
    kind = schema.get("type")
    if _metadata(schema).get(_WRAPPER):
        return False
    if kind in _STRICT:
        schema["strict"] = True
        return True
    if kind == "int":
        schema["strict"] = True
        if not _done(schema, "int"):
            _wrap(schema, _integral_float_as_int, "int")
        return True
    if kind in ("literal", "enum"):
        kinds = _member_kinds(schema)
        # Strings are matched exactly already; and a str Literal may be a union's tag, which
        # pydantic allows no validator on.
        if kinds and kinds != {"string"} and not _done(schema, "members"):
            _wrap(schema, _kind_guard(kinds), "members")
        return True
    if kind in ("datetime", "date"):
        if not _done(schema, "time"):
            _wrap(schema, _refuse_numbers(f"{kind}_type"), "time")
        return True
    if kind == "model":
        _prune_undeclared_nulls(schema)
        return False
    if kind in ("set", "frozenset") and not _done(schema, "unique"):
        _wrap(schema, _refuse_duplicates, "unique")
        return False  # its items are walked on by the caller
    if kind == "model-fields" and not _done(schema, "tags"):
        _check_literal_fields(schema)
        return False
    if kind == "model-field":
        default = schema.get("schema", {})
        if (
            default.get("type") == "default"
            and _metadata(default["schema"]).get(_WRAPPER) != "null-default"
            and not _done(default["schema"], "null-default")
            and not admits_none(default["schema"])
        ):
            # The field's type may be a model defined here: its ref stays on it.
            _wrap(default["schema"], _none_is_default, "null-default", move_ref=False)
        return False
    if (
        kind == "dict"
        and not _done(schema, "null-values")
        and not admits_none(schema.get("values_schema", {"type": "any"}))
    ):
        _wrap(schema, _drop_null_values, "null-values")
        return False  # the dict, now inside the wrapper, is walked on by the caller
    return False


def _prune_undeclared_nulls(schema: dict[str, Any]) -> None:
    """In a model that forbids undeclared fields, drop them when they are null.

    The apiserver drops a null before it prunes or validates, so ``{"name": "a", "other":
    null}`` is stored as ``{"name": "a"}``; pydantic would refuse ``other`` as extra.
    """
    config = schema.get("config") or {}
    inner = schema.get("schema")
    cls = schema.get("cls")
    if config.get("extra_fields_behavior") != "forbid" or not isinstance(inner, dict):
        return
    if not isinstance(cls, type) or _done(inner, "extra-nulls"):
        return
    declared = _input_keys(cls)

    def prune(value: Any) -> Any:
        if isinstance(value, dict) and any(
            item is None and key not in declared for key, item in value.items()
        ):
            return {k: v for k, v in value.items() if v is not None or k in declared}
        return value

    _wrap(inner, prune, "extra-nulls", move_ref=False)


def _check_literal_fields(schema: dict[str, Any]) -> None:
    """Guard the fields that are a ``Literal`` from the model's fields node.

    Such a field may be a discriminated union's tag, and pydantic allows no before-validator
    on a tag (nor on the default around it); one on the fields as a whole it allows. So a
    non-string member's JSON type is checked here, and a null on a defaulted tag is dropped
    here, as the apiserver drops it before applying the default.
    """
    guarded: list[tuple[tuple[str, ...], Any]] = []
    defaulted: list[tuple[str, ...]] = []
    for name, field in schema["fields"].items():
        inner = field["schema"]
        has_default = inner.get("type") == "default"
        if has_default:
            inner = inner["schema"]
        if inner.get("type") != "literal":
            continue
        alias = field.get("validation_alias")
        keys = (alias, name) if isinstance(alias, str) and alias != name else (name,)
        if has_default and None not in inner["expected"]:
            defaulted.append(keys)
            inner["metadata"] = {**_metadata(inner), f"{_CHECKED}:null-default": True}
        kinds = _member_kinds(inner)
        if kinds and kinds != {"string"}:
            guarded.append((keys, _kind_guard(kinds, keys[0])))
            inner["metadata"] = {**_metadata(inner), f"{_CHECKED}:members": True}
    if not guarded and not defaulted:
        return

    def check(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        nulls = [key for keys in defaulted for key in keys if key in value and value[key] is None]
        if nulls:
            value = {key: item for key, item in value.items() if key not in nulls}
        for keys, guard in guarded:
            for key in keys:
                if key in value:
                    guard(value[key])
                    break
        return value

    _wrap(schema, check, "tags")


def admits_none(schema: dict[str, Any]) -> bool:
    """Whether the JSON schema of this core schema lets null through (so a CRD keeps it)."""
    kind = schema.get("type")
    if kind in ("nullable", "none", "any"):
        return True
    if kind in ("default", "function-before", "function-after", "function-wrap"):
        return admits_none(schema["schema"])
    if kind == "union":
        return any(
            admits_none(choice[0] if isinstance(choice, tuple) else choice)
            for choice in schema["choices"]
        )
    if kind == "tagged-union":
        return any(admits_none(choice) for choice in schema["choices"].values())
    if kind == "literal":
        return None in schema["expected"]
    if kind == "definition-ref":
        return False  # a model, dataclass or enum defined once for several uses
    # A plain function or an unknown node: leave its nulls to it, as pydantic would.
    return kind not in _NOT_NULL


_NOT_NULL = frozenset(
    {
        "int",
        "float",
        "bool",
        "str",
        "bytes",
        "decimal",
        "datetime",
        "date",
        "time",
        "timedelta",
        "enum",
        "model",
        "dataclass",
        "typed-dict",
        "list",
        "tuple",
        "set",
        "frozenset",
        "dict",
        "uuid",
        "url",
    }
)


def _metadata(schema: dict[str, Any]) -> dict[str, Any]:
    metadata = schema.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def _done(schema: dict[str, Any], what: str) -> bool:
    return bool(_metadata(schema).get(f"{_CHECKED}:{what}"))


def _wrap(schema: dict[str, Any], function: Any, what: str, *, move_ref: bool = True) -> None:
    """Put a before-validator around ``schema``, in place (its parent keeps the same dict).

    A ref moves to the wrapper, so every use of a definition (an enum) gets the check.
    """
    inner = dict(schema)
    ref = inner.pop("ref", None) if move_ref else None
    inner["metadata"] = {**_metadata(inner), f"{_CHECKED}:{what}": True}
    schema.clear()
    schema.update(
        core_schema.no_info_before_validator_function(
            function, inner, ref=ref, metadata={_WRAPPER: what}
        )
    )


def _json_kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return None


_INT64 = (-(2**63), 2**63 - 1)


def _integral_float_as_int(value: Any) -> Any:
    # The apiserver decodes a whole float below 2**53 as an integer; beyond, it stays a float.
    if type(value) is float and value.is_integer() and abs(value) < 2**53:
        return int(value)
    # ... and an integer beyond int64 as a number it cannot store in an integer field.
    if type(value) is int and not _INT64[0] <= value <= _INT64[1]:
        raise ValueError(f"{value} is outside the int64 range the apiserver stores integers in")
    return value


def _refuse_duplicates(value: Any) -> Any:
    """A JSON list for a ``set`` must not repeat an item (``x-kubernetes-list-type: set``);
    pydantic would silently drop the repeats."""
    if isinstance(value, list):
        try:
            unique = len(set(value)) == len(value)
        except TypeError:  # unhashable items: the set validator refuses them anyway
            return value
        if not unique:
            raise PydanticCustomError("set_duplicates", "items of a set must not repeat")
    return value


def _member_kinds(schema: dict[str, Any]) -> frozenset[str]:
    if schema["type"] == "literal":
        values = list(schema["expected"])
    else:
        values = [member.value for member in schema["members"]]
    kinds = {_json_kind(value) for value in values if value is not None}
    if None in kinds:
        return frozenset()  # members that are not JSON scalars: pydantic decides
    if "integer" in kinds or "number" in kinds:
        kinds |= {"integer", "number"} if "number" in kinds else {"integer"}
    return frozenset(k for k in kinds if k is not None)


def _kind_guard(kinds: frozenset[str], field: str | None = None) -> Any:
    expected = "number" if "number" in kinds else min(kinds)

    def guard(value: Any) -> Any:
        if isinstance(value, enum.Enum):
            return value  # a member: the enum validator knows it
        kind = _json_kind(value)
        if kind is None or kind in kinds:
            return value
        if field is None:  # the error is placed at the value itself
            raise PydanticKnownError(_TYPE_ERRORS[expected])  # type: ignore[arg-type]
        raise PydanticCustomError(
            "literal_type",
            "{field}: Input should be a valid {expected}, not a JSON {kind}",
            {"field": field, "kind": kind, "expected": expected},
        )

    return guard


def _refuse_numbers(error: str) -> Any:
    def guard(value: Any) -> Any:
        if _json_kind(value) in ("boolean", "integer", "number"):
            raise PydanticKnownError(error)  # type: ignore[arg-type]
        return value

    return guard


def _none_is_default(value: Any) -> Any:
    if value is None:
        raise PydanticUseDefault  # the apiserver drops the null, then applies the default
    return value


def _drop_null_values(value: Any) -> Any:
    if isinstance(value, dict) and any(item is None for item in value.values()):
        return {key: item for key, item in value.items() if item is not None}
    return value


def check_variant_fields(schema: dict[str, Any], resolve: Any) -> None:
    """Refuse, in a union of models, a field that only another variant has (in place).

    ``resolve`` finds the schema of a ``definition-ref`` (``GetCoreSchemaHandler``'s).
    """
    if schema.get("type") not in ("union", "tagged-union") or _done(schema, "variants"):
        return
    choices = schema["choices"]
    branches = list(choices.values()) if schema["type"] == "tagged-union" else list(choices)
    classes = []
    for branch in branches:
        node = branch[0] if isinstance(branch, tuple) else branch
        if isinstance(node, str | int):
            continue  # a tagged union's alias for another choice
        cls = _model_class(node, resolve)
        if cls is None:
            return  # not a union of models: nothing is merged in the CRD
        classes.append(cls)
    if len(classes) < 2:
        return
    keys = {cls: _input_keys(cls) for cls in classes}
    everything = set().union(*keys.values())

    def check(value: Any, handler: Any) -> Any:
        result = handler(value)
        if isinstance(value, dict) and type(result) in keys:
            foreign = sorted(
                key
                for key in everything - keys[type(result)]
                if value.get(key) is not None  # the apiserver prunes a null first
            )
            if foreign:
                raise PydanticCustomError(
                    "union_variant_fields",
                    "{fields}: not a field of {variant}, the variant given, but of another",
                    {"fields": ", ".join(foreign), "variant": type(result).__name__},
                )
        return result

    inner = dict(schema)
    ref = inner.pop("ref", None)
    inner["metadata"] = {**_metadata(inner), f"{_CHECKED}:variants": True}
    schema.clear()
    schema.update(
        core_schema.no_info_wrap_validator_function(
            check, inner, ref=ref, metadata={_WRAPPER: "variants"}
        )
    )


def _model_class(node: dict[str, Any], resolve: Any) -> type | None:
    for _ in range(8):  # through refs and validators to the model
        kind = node.get("type")
        if kind == "model":
            cls = node.get("cls")
            return cls if isinstance(cls, type) else None
        if kind == "definition-ref":
            try:
                node = resolve(node)
            except LookupError:
                return None
        elif kind in ("function-before", "function-after", "function-wrap"):
            node = node["schema"]
        else:
            return None
    return None


def _input_keys(cls: type) -> set[str]:
    fields = getattr(cls, "model_fields", {})
    out: set[str] = set()
    for name, field in fields.items():
        out.add(name)
        if isinstance(field.validation_alias, str):
            out.add(field.validation_alias)
        elif field.alias:
            out.add(field.alias)
    return out
