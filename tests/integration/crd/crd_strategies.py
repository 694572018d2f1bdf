"""Hypothesis strategies that build JSON documents from a generated structural schema.

``documents(schema)`` draws documents that satisfy the schema's value checks (CEL rules are
left to chance), then perhaps breaks exactly one check the schema states: a bound, a length,
a pattern, an enum, a required field, a list or map size, uniqueness of a set or map list.
Or it changes one value's JSON type the way pydantic's lax mode would convert back (``"3"`` or
``true`` for an integer, ``3.0``, which the apiserver takes as one) or makes it null (a field,
an item, a map value). Whether a document is valid is decided afterwards by pydantic; the test
then asks the apiserver the same question.
"""

from __future__ import annotations

import base64
import re
import string
from datetime import UTC, timedelta
from typing import Any

from hypothesis import strategies as st

from crdkit.crd.types import format_duration

Schema = dict[str, Any]
JSON_INT = 2**53 - 1  # integers beyond this lose precision in JSON numbers (and in Go's float64)

_TEXT = st.text(alphabet=string.ascii_letters + string.digits + "-_. ", max_size=12)
_KEY = st.text(alphabet=string.ascii_lowercase + string.digits, min_size=1, max_size=8)
_JSON_LEAF = st.none() | st.booleans() | st.integers(-1000, 1000) | _TEXT
_JSON = st.recursive(
    _JSON_LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEY, inner, max_size=3),
    max_leaves=6,
)
_DAY = timedelta(days=1)
_DNS_LABEL = st.from_regex(r"\A[a-z]([-a-z0-9]{0,10}[a-z0-9])?\Z")


def _formatted(name: str) -> st.SearchStrategy[str] | None:
    if name == "ipv4":
        return st.ip_addresses(v=4).map(str)
    if name == "ipv6":
        return st.ip_addresses(v=6).map(str)
    if name == "cidr":
        return st.tuples(st.ip_addresses(v=4), st.integers(0, 32)).map(lambda t: f"{t[0]}/{t[1]}")
    if name == "uuid":
        return st.uuids().map(str)
    if name == "hostname":
        return st.lists(_DNS_LABEL, min_size=1, max_size=3).map(".".join)
    if name == "date-time":
        return st.datetimes(timezones=st.just(UTC)).map(
            lambda d: d.isoformat().replace("+00:00", "Z")
        )
    if name == "date":
        return st.dates().map(lambda d: d.isoformat())
    if name == "duration":
        return duration_strings()
    if name == "byte":
        return base64_strings()
    return None


# -- scalar formats: strings around what the apiserver accepts, valid or not ----------------

# Unit words the apiserver's duration fallback knows (and near misses it refuses).
_UNIT_WORDS = (
    "ns", "us", "µs", "μs", "ms", "s", "m", "h", "d", "w", "D", "H", "Ms", "nano", "nanos",
    "micro", "microseconds", "milli", "millis", "sec", "secs", "seconds", "min", "mins",
    "minutes", "hr", "hour", "Hours", "day", "days", "wk", "week", "weeks",
    "hrs", "wks", "mi", "x", "µsec",
)  # fmt: skip
_DURATION_EDGES = (
    "", "0", "-0", "3", "1.5.5s", ".5h", "-.5h", "3\vs", "3\td", "9" * 20 + "d",
    "1000000000d", "2562047h47m16.854775807s", "2562048h", "PT1H30M", "P1D", "1h30x",
)  # fmt: skip


def duration_strings() -> st.SearchStrategy[str]:
    """Go durations, the looser forms the apiserver's duration format accepts, and strings
    it refuses."""
    go = st.timedeltas(min_value=-_DAY * 30, max_value=_DAY * 30).map(format_duration)
    go_syntax = st.from_regex(
        r"\A[-+]?([0-9]{1,5}(\.[0-9]{0,3})?(ns|us|µs|ms|s|m|h)){1,3}\Z", fullmatch=True
    )
    part = st.tuples(
        st.integers(0, 10**6).map(str) | st.just("9999999999"),
        st.sampled_from(["", " ", "\t"]),
        st.sampled_from(_UNIT_WORDS),
    ).map("".join)
    loose = st.tuples(
        st.sampled_from(["", "-", "+", "abc ", "1."]),
        st.lists(part, min_size=1, max_size=3).map(" ".join),
        st.sampled_from(["", "x", " foo", "5"]),
    ).map("".join)
    return go | go_syntax | loose | st.sampled_from(_DURATION_EDGES)


_BASE64_EDGES = (
    "", "=", "====", "YQ", "YQ=", "YQ==", "YWI=", "aGVsbB==", "aGVsbG8", "aGVs\nbG8=",
    "aGVs bG8=", "aGVsbG-_", "aGVsbG8=\r\n", "aGVsbA==aGVs", "\taGVs",
)  # fmt: skip


def base64_strings() -> st.SearchStrategy[str]:
    """Standard padded base64 of some bytes, and strings near it."""
    encoded = st.binary(min_size=1, max_size=12).map(lambda b: base64.b64encode(b).decode())
    url_safe = st.binary(min_size=1, max_size=12).map(
        lambda b: base64.urlsafe_b64encode(b).decode()
    )
    unpadded = encoded.map(lambda text: text.rstrip("="))
    return encoded | url_safe | unpadded | st.sampled_from(_BASE64_EDGES)


def _string(schema: Schema, hints: tuple[str, ...]) -> st.SearchStrategy[str]:
    low = schema.get("minLength", 0)
    high = schema.get("maxLength")
    formatted = _formatted(schema.get("format", ""))
    if formatted is not None:
        base = formatted
    elif "pattern" in schema:
        base = st.from_regex(schema["pattern"], fullmatch=True)
    else:
        free = st.text(
            alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
            min_size=low,
            max_size=high if high is not None else max(low, 12),
        )
        if not hints:
            return free
        # Strings built on literals of the schema's CEL rules, so rules pass now and then.
        hinted = st.tuples(st.sampled_from(hints), _TEXT).map("".join)
        base = free | hinted
    return base.filter(lambda s: low <= len(s) <= (high if high is not None else len(s)))


def cel_literals(schema: Schema) -> tuple[str, ...]:
    """String literals quoted in any CEL rule of ``schema``."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for rule in node.get("x-kubernetes-validations", []):
                found.update(re.findall(r"'([^'\\]*)'", rule["rule"]))
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(schema)
    return tuple(sorted(found))


# The integer formats' ranges, which the apiserver enforces.
_FORMAT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _number(schema: Schema, integer: bool) -> st.SearchStrategy[Any]:
    low = schema.get("minimum", -1_000_000)
    high = schema.get("maximum", 1_000_000)
    if integer and schema.get("format") in _FORMAT_RANGES and "minimum" not in schema:
        low, high = _FORMAT_RANGES[schema["format"]]
        return st.integers(low, high) | st.sampled_from([low, high, 0, 4.0])
    if integer:
        low = int(low) + (1 if schema.get("exclusiveMinimum") else 0)
        high = int(high) - (1 if schema.get("exclusiveMaximum") else 0)
        step = schema.get("multipleOf")
        if step:
            return st.integers(-(-low // step), high // step).map(lambda n: n * step)
        return st.integers(max(low, -JSON_INT), min(high, JSON_INT))
    return st.floats(
        low,
        high,
        exclude_min=bool(schema.get("exclusiveMinimum")),
        exclude_max=bool(schema.get("exclusiveMaximum")),
        allow_nan=False,
        allow_infinity=False,
    )


def values(schema: Schema, hints: tuple[str, ...] = ()) -> st.SearchStrategy[Any]:
    """Values that pass every value check of ``schema`` (not its CEL rules); null too where
    the schema is nullable."""
    drawn = _non_null_values(schema, hints)
    return st.none() | drawn if schema.get("nullable") else drawn


def _non_null_values(schema: Schema, hints: tuple[str, ...]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if schema.get("x-kubernetes-int-or-string"):
        return _int_or_string(schema, hints)
    if schema.get("x-kubernetes-embedded-resource"):
        return _embedded(schema)
    kind = schema.get("type")
    if kind is None:
        return _JSON
    if kind == "string":
        return _string(schema, hints)
    if kind in ("integer", "number"):
        return _number(schema, kind == "integer")
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return _array(schema, hints)
    return _object(schema, hints)


def _int_or_string(schema: Schema, hints: tuple[str, ...]) -> st.SearchStrategy[Any]:
    # Whole-number floats are integers to the apiserver (it stores 4.0 as 4); from 2**53 on
    # they are not.
    numbers = st.integers(-(10**6), 10**6) | st.sampled_from([4.0, -2.0, 0.0])
    if "pattern" in schema:  # a quantity: its strings must match
        return numbers | st.from_regex(schema["pattern"], fullmatch=True)
    text = st.text(alphabet=string.ascii_letters, min_size=1)
    if hints:  # CEL literals at either end, so rules such as endsWith('%') pass now and then
        text = text | st.tuples(_TEXT, st.sampled_from(hints)).map("".join)
    return numbers | text


def _array(schema: Schema, hints: tuple[str, ...]) -> st.SearchStrategy[list[Any]]:
    items = schema["items"]
    low = schema.get("minItems", 0)
    high = min(schema.get("maxItems", low + 3), low + 3)
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set":
        return st.lists(values(items, hints), min_size=low, max_size=high, unique=True)
    if list_type == "map":
        keys = schema["x-kubernetes-list-map-keys"]
        return st.lists(
            values(items, hints),
            min_size=low,
            max_size=high,
            unique_by=lambda item: tuple(
                item.get(k, items["properties"][k].get("default")) for k in keys
            ),
        )
    return st.lists(values(items, hints), min_size=low, max_size=high)


def _object(schema: Schema, hints: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    properties = schema.get("properties")
    if properties is None:
        additional = schema.get("additionalProperties")
        if additional is None:
            return st.dictionaries(_KEY, _JSON, max_size=3)
        low = schema.get("minProperties", 0)
        high = min(schema.get("maxProperties", low + 3), low + 3)
        return st.dictionaries(_KEY, values(additional, hints), min_size=low, max_size=high)
    required = set(schema.get("required", []))
    base = st.fixed_dictionaries(
        {name: values(s, hints) for name, s in properties.items() if name in required},
        optional={name: values(s, hints) for name, s in properties.items() if name not in required},
    )
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        extra = st.dictionaries(st.sampled_from(["extraA", "extraB"]), _JSON_LEAF, max_size=2)
        return st.tuples(base, extra).map(lambda t: {**t[1], **t[0]})
    return base


def _embedded(schema: Schema) -> st.SearchStrategy[dict[str, Any]]:
    """A small valid Kubernetes object: the apiserver checks apiVersion, kind and metadata."""
    metadata = st.fixed_dictionaries({}, optional={"name": _DNS_LABEL})
    return st.fixed_dictionaries(
        {"apiVersion": st.just("v1"), "kind": st.sampled_from(["ConfigMap", "Pod"])},
        optional={
            "metadata": metadata,
            "spec": st.dictionaries(_KEY, _JSON_LEAF, max_size=2),
        },
    )


# -- breaking one check ---------------------------------------------------------------------


def _breakers(schema: Schema, value: Any) -> list[Any]:
    """Replacement values that violate one check of ``schema`` (none when it states none)."""
    out: list[Any] = []
    if "enum" in schema:
        sample = schema["enum"][0]
        out.append("not-in-enum" if isinstance(sample, str) else 987654)
    if schema.get("x-kubernetes-int-or-string"):
        out.extend([4.5, True, 2.0**53])
        if "pattern" in schema:
            out.extend([2**63, "4XB", " 4"])
    if schema.get("format") in _FORMAT_RANGES and isinstance(value, int):
        low, high = _FORMAT_RANGES[schema["format"]]
        out.extend([low - 1, high + 1])
    if schema.get("format") == "byte" and isinstance(value, str):
        out.extend(["aGVsbG8", "aGVsbG-_", ""])
    if schema.get("format") == "duration" and isinstance(value, str):
        out.extend(["3hrs", "3", "3\vs"])
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema:
            out.append(schema["minimum"] - (0 if schema.get("exclusiveMinimum") else 1))
        if "maximum" in schema:
            out.append(schema["maximum"] + (0 if schema.get("exclusiveMaximum") else 1))
        if schema.get("multipleOf"):
            out.append(schema["multipleOf"] * 3 + 1)
    if isinstance(value, str) and "enum" not in schema:
        if "maxLength" in schema:
            out.append("x" * (schema["maxLength"] + 1))
        if schema.get("minLength", 0) > 0:
            out.append("")
        if "pattern" in schema:
            out.append("!!! no match !!!")
        if schema.get("format") in ("ipv4", "cidr", "uuid", "hostname"):
            out.append("not_a_" + schema["format"] + "!")
    if isinstance(value, list):
        if "maxItems" in schema and value:
            out.append(value + [value[0]] * (schema["maxItems"] + 1 - len(value)))
        if schema.get("minItems", 0) > 0:
            out.append([])
        if schema.get("x-kubernetes-list-type") in ("set", "map") and value:
            out.append([*value, value[0]])
    if isinstance(value, dict) and "properties" not in schema:
        if "maxProperties" in schema:
            extra = {
                f"k{i}": next(iter(value.values()), 0) for i in range(schema["maxProperties"] + 1)
            }
            if value:
                out.append({**value, **extra})
        if schema.get("minProperties", 0) > 0:
            out.append({})
    return out


def _retyped(schema: Schema, value: Any) -> list[Any]:
    """``value`` as other JSON types that pydantic's lax mode would read as the same value."""
    if "type" not in schema and not schema.get("x-kubernetes-int-or-string"):
        return []  # unknown fields: any JSON is valid
    if isinstance(value, bool):
        return [str(value).lower(), int(value)]
    if isinstance(value, int):
        return [str(value), float(value), value == 1]
    if isinstance(value, float):
        return [str(value), True, *([int(value)] if value.is_integer() else [])]
    # (A number for a duration is left out: Duration's own parsing, not a scalar type.)
    if (
        isinstance(value, str)
        and schema.get("type") == "string"
        and schema.get("format") != "duration"
    ):
        return [len(value), bool(value)]
    return []


def _mutation_points(schema: Schema, value: Any, path: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """(path, replacement) pairs, or (path, DELETE) for a required field."""
    points: list[tuple[Any, ...]] = [(path, b) for b in _breakers(schema, value)]
    points.extend((path, other) for other in _retyped(schema, value))
    if isinstance(value, dict) and "properties" in schema:
        for name in schema.get("required", []):
            if name in value:
                points.append(((*path, name), _DELETE))
        for name, child in schema["properties"].items():
            points.append(((*path, name), None))  # present or not: the apiserver may prune it
            if name in value:
                points.extend(_mutation_points(child, value[name], (*path, name)))
    elif isinstance(value, dict) and isinstance(schema.get("additionalProperties"), dict):
        for name, item in value.items():
            points.append(((*path, name), None))
            points.extend(_mutation_points(schema["additionalProperties"], item, (*path, name)))
    elif isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            points.append(((*path, index), None))
            points.extend(_mutation_points(schema["items"], item, (*path, index)))
    return points


_DELETE = object()


def _apply(document: Any, path: tuple[Any, ...], replacement: Any) -> Any:
    if not path:
        return replacement
    head, rest = path[0], path[1:]
    if isinstance(document, dict):
        copy = dict(document)
        if not rest and replacement is _DELETE:
            del copy[head]
        elif not rest:
            copy[head] = replacement  # the key may be new (a null for an absent field)
        else:
            copy[head] = _apply(document[head], rest, replacement)
        return copy
    copy_list = list(document)
    copy_list[head] = _apply(document[head], rest, replacement)
    return copy_list


@st.composite
def documents(draw: st.DrawFn, schema: Schema, *, whole_floats: bool = True) -> tuple[Any, str]:
    """A document and how it was made: ``"valid"`` or ``"broke <path>"``.

    ``whole_floats=False`` leaves out whole numbers written as floats (``3.0``): the
    apiserver's schema takes them as integers, but its CEL rules and scale and field-selector
    paths see a float64 and fail, which pydantic does not model everywhere.
    """
    document = draw(values(schema, cel_literals(schema)))
    if not draw(st.booleans()):
        return document, "valid"
    points = _mutation_points(schema, document, ())
    if not whole_floats:
        points = [p for p in points if not (isinstance(p[1], float) and p[1].is_integer())]
    if not points:
        return document, "valid"
    path, replacement = draw(st.sampled_from(points))
    return _apply(document, path, replacement), "broke ." + ".".join(map(str, path))
