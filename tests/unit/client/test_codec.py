"""Decoding lists and objects from raw bytes, and splitting a list into its items' JSON."""

from __future__ import annotations

import gc
import json

import pytest

from crdkit.client.codec import (
    DictCodec,
    RawListPage,
    codec_for,
    key_and_version,
    paused_gc,
    split_list,
)
from crdkit.client.errors import DecodeError
from crdkit.client.objects import object_key, resource_version_of
from crdkit.resources import ConfigMap

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
