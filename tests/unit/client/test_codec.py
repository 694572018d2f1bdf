"""Decoding lists and objects from raw bytes, and splitting a list into its items' JSON."""

from __future__ import annotations

import gc
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field, field_validator, model_validator

from crdkit.client.codec import (
    DictCodec,
    InvalidObject,
    RawListPage,
    codec_for,
    key_and_version,
    paused_gc,
    split_list,
    wire_path,
)
from crdkit.client.errors import DecodeError
from crdkit.client.objects import object_key, resource_version_of
from crdkit.resources import ApiModel, ConfigMap, CustomResource

LIST = json.dumps(
    {
        "apiVersion": "v1",
        "kind": "ConfigMapList",
        "metadata": {"resourceVersion": "12", "continue": "tok", "remainingItemCount": 3},
        "items": [{"metadata": {"name": "a", "namespace": "n"}, "data": {"x": "1"}}],
    }
).encode()


def test_model_list_page() -> None:
    page = codec_for(ConfigMap).decode_list(LIST)
    assert page.resource_version == "12"
    assert page.continue_token == "tok"
    assert page.remaining_item_count == 3
    assert [item.metadata.name for item in page.items] == ["a"]
    assert page.items[0].kind == "ConfigMap"  # filled in for list items


def test_dict_list_page() -> None:
    page = DictCodec().decode_list(LIST)
    assert (page.resource_version, page.continue_token) == ("12", "tok")
    assert page.items[0]["data"] == {"x": "1"}


def test_split_list_keeps_each_item_as_the_server_sent_it() -> None:
    body = (
        b'{"kind":"ConfigMapList","items":[{"metadata":{"name":"a"},"data":{"s":"},{\\""}},'
        b' {"metadata":{"name":"b"}} ],"metadata":{"resourceVersion":"7","continue":"t",'
        b'"remainingItemCount":2}}'
    )
    page = split_list(body)
    assert page == RawListPage(
        items=[b'{"metadata":{"name":"a"},"data":{"s":"},{\\""}}', b'{"metadata":{"name":"b"}}'],
        resource_version="7",
        continue_token="t",
        remaining_item_count=2,
    )
    assert [type(item) for item in page.items] == [bytes, bytes]
    assert json.loads(page.items[0])["data"]["s"] == '},{"'


def test_split_list_of_an_empty_or_last_page() -> None:
    page = split_list(b'{"items":[],"metadata":{"resourceVersion":"5","continue":""}}')
    assert page == RawListPage([], "5", None)
    assert split_list(b'{"metadata":{"resourceVersion":"5"},"items":null}').items == []
    assert split_list(b"{}") == RawListPage([], "", None)


@pytest.mark.parametrize(
    "body",
    [
        b'{"metadata": 3}',
        b'{"metadata": {"resourceVersion": 5}}',
        b'{"items": {}}',
        b'{"items": [{"a": 1}, {"b": ]}',  # malformed JSON inside an item is found too
        b"[]",
        b"not json",
    ],
)
def test_split_list_rejects_what_is_not_a_list(body: bytes) -> None:
    with pytest.raises(DecodeError, match="not a list"):
        split_list(body)


def test_list_item_that_does_not_decode_is_named_by_index() -> None:
    body = b'{"metadata":{},"items":[{"metadata":{"name":"a"}},{"metadata":"nope"}]}'
    with pytest.raises(DecodeError, match=r"list item 1: .*ConfigMap"):
        codec_for(ConfigMap).decode_list(body)
    with pytest.raises(DecodeError, match="list item 0"):
        DictCodec().decode_list(b'{"items":[[1]]}')


def test_decode_page_matches_decoding_each_item() -> None:
    codec = codec_for(ConfigMap)
    raw = split_list(LIST)
    page = codec.decode_page(raw)
    assert page.items == [codec.decode(item) for item in raw.items]
    assert (page.resource_version, page.continue_token, page.remaining_item_count) == (
        "12",
        "tok",
        3,
    )


def test_null_items_is_an_empty_page() -> None:
    page = codec_for(ConfigMap).decode_list(b'{"metadata":{"resourceVersion":"1"},"items":null}')
    assert page.items == []


def test_encode_round_trip_keeps_unknown_fields() -> None:
    codec = codec_for(ConfigMap)
    obj = codec.decode(b'{"metadata":{"name":"a"},"data":{},"futureField":{"x":1}}')
    assert json.loads(codec.encode(obj))["futureField"] == {"x": 1}
    with pytest.raises(TypeError):
        codec.encode({"not": "a model"})  # type: ignore[arg-type]


def test_decode_errors_name_the_type() -> None:
    with pytest.raises(DecodeError, match="ConfigMap"):
        codec_for(ConfigMap).decode(b'{"metadata": "nope"}')
    with pytest.raises(DecodeError):
        DictCodec().decode(b"[1]")


def test_codec_is_cached_per_model() -> None:
    assert codec_for(ConfigMap) is codec_for(ConfigMap)


def test_paused_gc_restores_the_previous_state() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # an application's choice is left alone
    finally:
        gc.enable()


@pytest.mark.parametrize(
    "obj",
    [
        {"metadata": {"name": "a", "namespace": "ns", "resourceVersion": "4"}, "data": {}},
        {"metadata": {"name": "node-1", "resourceVersion": "9"}},
        {"metadata": {"name": "a", "namespace": ""}},
        {"kind": "ConfigMap", "metadata": {"name": "b", "labels": {"x": "y"}}, "spec": [1]},
    ],
)
def test_key_and_version_match_the_decoded_object(obj: dict[str, object]) -> None:
    decoded = DictCodec().decode(json.dumps(obj).encode())
    assert key_and_version(json.dumps(obj).encode()) == (
        object_key(decoded),
        resource_version_of(decoded),
    )


@pytest.mark.parametrize(
    "raw",
    [b"{}", b'{"metadata":null}', b'{"metadata":{"name":""}}', b'{"metadata":3}', b"[", b"7"],
)
def test_key_and_version_without_a_name_is_none(raw: bytes) -> None:
    assert key_and_version(raw) is None


# -- objects the type refuses, item by item --------------------------------------------------


class Limit(ApiModel):
    max_size: int = 0

    @field_validator("max_size")
    @classmethod
    def _not_negative(cls, value: int) -> int:
        if value < 0:
            raise ValueError("must not be negative")
        return value


class GadgetSpec(ApiModel):
    size: int = 0
    limits: list[Limit] = Field(default_factory=list)

    @model_validator(mode="after")
    def _not_thirteen(self) -> GadgetSpec:
        # A rule with no CEL twin: the CRD lets 13 through, the model does not.
        if self.size == 13:
            raise ValueError("size 13 is not allowed")
        return self


class Gadget(CustomResource, group="codec.test.crdkit.io", version="v1", kind="Gadget"):
    spec: GadgetSpec = Field(default_factory=GadgetSpec)


def gadget(name: str, size: int = 1, version: str = "1", limits: list[int] | None = None) -> bytes:
    spec: dict[str, object] = {"size": size}
    if limits is not None:
        spec["limits"] = [{"maxSize": value} for value in limits]
    return json.dumps(
        {
            "apiVersion": "codec.test.crdkit.io/v1",
            "kind": "Gadget",
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": version},
            "spec": spec,
        }
    ).encode()


def test_try_decode_of_a_valid_object_is_the_object() -> None:
    codec = codec_for(Gadget)
    assert codec.try_decode(gadget("a")) == codec.decode(gadget("a"))


def test_try_decode_reports_a_model_level_refusal_with_the_objects_identity() -> None:
    invalid = codec_for(Gadget).try_decode(gadget("bad", size=13, version="7"))
    assert isinstance(invalid, InvalidObject)
    assert (invalid.key, invalid.resource_version, invalid.type_name) == ("ns/bad", "7", "Gadget")
    assert invalid.paths == ["spec"]
    assert "size 13 is not allowed" in invalid.message
    assert invalid.raw == gadget("bad", size=13, version="7")
    with pytest.raises(DecodeError, match=r"not a valid Gadget: spec: .*size 13"):
        raise invalid.error()


def test_field_paths_are_wire_names_with_list_indices() -> None:
    invalid = codec_for(Gadget).try_decode(gadget("bad", limits=[1, -1, -2]))
    assert isinstance(invalid, InvalidObject)
    assert invalid.paths == ["spec.limits[1].maxSize", "spec.limits[2].maxSize"]
    assert invalid.message.startswith("spec.limits[1].maxSize: Value error, must not be negative")


@pytest.mark.parametrize(
    ("loc", "path"),
    [((), ""), (("spec",), "spec"), (("spec", "items", 0, "name"), "spec.items[0].name")],
)
def test_wire_path(loc: tuple[int | str, ...], path: str) -> None:
    assert wire_path(loc) == path


def test_a_lenient_page_decodes_every_item_and_reports_the_refused_ones() -> None:
    page = RawListPage([gadget("a"), gadget("bad", size=13), gadget("c")], "9", None)
    codec = codec_for(Gadget)
    results = [obj for _, obj in codec.iter_page_lenient(page)]
    assert [type(obj) for obj in results] == [Gadget, InvalidObject, Gadget]
    assert [raw for raw, _ in codec.iter_page_lenient(page)] == page.items
    with pytest.raises(DecodeError, match="list item 1"):
        codec.decode_page(page)  # the strict path is unchanged


def test_dict_codec_refuses_an_item_that_is_not_an_object_as_a_whole() -> None:
    invalid = DictCodec().try_decode(b"[1]")
    assert isinstance(invalid, InvalidObject)
    assert invalid.key is None
    assert invalid.paths == [""]
    assert DictCodec().try_decode(b'{"metadata":{"name":"a"}}') == {"metadata": {"name": "a"}}


@given(sizes=st.lists(st.integers(min_value=0, max_value=20), max_size=30))
def test_lenient_decoding_keeps_exactly_what_strict_decoding_accepts(sizes: list[int]) -> None:
    page = RawListPage([gadget(f"g{i}", size) for i, size in enumerate(sizes)], "1", None)
    codec = codec_for(Gadget)
    kept: list[Gadget] = []
    refused: list[str | None] = []
    for _, obj in codec.iter_page_lenient(page):
        if isinstance(obj, InvalidObject):
            refused.append(obj.key)
        else:
            kept.append(obj)
    assert refused == [f"ns/g{i}" for i, size in enumerate(sizes) if size == 13]
    assert kept == [
        codec.decode(raw) for raw, size in zip(page.items, sizes, strict=True) if size != 13
    ]
