"""Decoding lists and objects from raw bytes, and the cheap list-metadata scan."""

from __future__ import annotations

import gc
import json

import pytest

from crdkit.client.codec import DictCodec, codec_for, list_metadata, paused_gc
from crdkit.client.errors import DecodeError
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


def test_list_metadata_reads_only_the_envelope() -> None:
    assert list_metadata(LIST) == ("12", "tok")
    assert list_metadata(b'{"items":[],"metadata":{"resourceVersion":"5"}}') == ("5", None)
    with pytest.raises(DecodeError):
        list_metadata(b'{"metadata": 3}')


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
