"""CEL types of schemas, with the sizes the apiserver's cost estimate assumes."""

from __future__ import annotations

from crdkit.crd.cel_types import MAX_REQUEST_SIZE, decl_type, max_cardinality


def test_a_max_length_counts_four_bytes_a_character() -> None:
    bounded = decl_type({"type": "string", "maxLength": 64})
    assert bounded is not None
    assert (bounded.max_elements, bounded.unbounded) == (256, False)
    free = decl_type({"type": "string"})
    assert free is not None
    assert (free.max_elements, free.unbounded) == (MAX_REQUEST_SIZE - 2, True)


def test_enums_and_formats_bound_strings() -> None:
    enum = decl_type({"type": "string", "enum": ["a", "long", "é"]})
    assert enum is not None
    assert (enum.max_elements, enum.unbounded) == (4, False)
    when = decl_type({"type": "string", "format": "date-time"})
    assert when is not None
    assert (when.kind, when.max_elements, when.min_size) == ("timestamp", 32, 21)
    duration = decl_type({"type": "string", "format": "duration"})
    assert duration is not None
    assert (duration.kind, duration.min_size) == ("duration", 3)


def test_unbounded_lists_and_maps_hold_what_fits_a_request() -> None:
    objects = decl_type({"type": "array", "items": {"type": "object"}})
    assert objects is not None
    assert objects.max_elements == (MAX_REQUEST_SIZE - 2) // 3  # "{}" and a comma
    ints = decl_type({"type": "object", "additionalProperties": {"type": "integer"}})
    assert ints is not None
    assert ints.kind == "map"
    assert ints.max_elements == (MAX_REQUEST_SIZE - 2) // 7  # '"k":0,' around a value
    bounded = decl_type({"type": "array", "maxItems": 5, "items": {"type": "boolean"}})
    assert bounded is not None
    assert (bounded.max_elements, bounded.unbounded) == (5, False)


def test_required_fields_without_defaults_make_an_object_longer() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "n": {"type": "integer", "default": 1},
                       "opt": {"type": "string"}},
        "required": ["name", "n"],
    }  # fmt: skip
    found = decl_type(schema)
    assert found is not None
    assert found.min_size == 2 + len("name") + 2 + 4  # {"name":""}
    assert set(found.fields) == {"name", "n", "opt"}
    assert max_cardinality(found.min_size) == MAX_REQUEST_SIZE // 13


def test_resource_roots_type_metadata_names() -> None:
    root = decl_type({"type": "object", "properties": {"spec": {"type": "object"}}}, True)
    assert root is not None
    name = root.fields["metadata"].fields["name"]
    assert name.max_elements == 253 * 4
    assert {"apiVersion", "kind", "spec"} <= set(root.fields)


def test_int_or_string_is_dynamic_and_untyped_values_are_invisible() -> None:
    both = decl_type({"x-kubernetes-int-or-string": True, "maxLength": 3})
    assert both is not None
    assert (both.kind, both.max_elements, both.min_size) == ("dyn", 12, 1)
    assert decl_type({"x-kubernetes-preserve-unknown-fields": True}) is None
    weird = decl_type({"type": "object", "properties": {"a-b": {"type": "string"},
                                                        "a b": {"type": "string"}}})  # fmt: skip
    assert weird is not None
    assert set(weird.fields) == {"a__dash__b"}
