"""Informer pieces that need no apiserver: backoff bounds, options, metadata-only typing."""

from __future__ import annotations

import pytest

from crdkit.client import Client, ClientConfig, GroupVersionKind
from crdkit.client.codec import DictCodec
from crdkit.resources import ConfigMap, PartialObjectMetadata
from crdkit.runtime.informer import Backoff, Informer, strip_managed_fields


def test_backoff_doubles_with_jitter_within_bounds() -> None:
    backoff = Backoff(0.8, 30.0)
    delays = [backoff.next() for _ in range(12)]
    assert all(0.8 <= d <= 30.0 for d in delays)
    assert delays[0] < 1.6 + 1e-9
    assert delays[-1] == 30.0 or delays[-1] >= 15.0  # reached the cap region
    backoff.reset()
    assert backoff.next() < 1.6 + 1e-9


def test_backoff_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="initial"):
        Backoff(0, 1)
    with pytest.raises(ValueError, match="initial"):
        Backoff(2, 1)


def client() -> Client:
    return Client(ClientConfig(server="https://127.0.0.1:1"))


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="resync_period"):
        Informer(client(), ConfigMap, resync_period=0)
    with pytest.raises(ValueError, match="watch_timeout"):
        Informer(client(), ConfigMap, watch_timeout=(10, 5))


async def test_wait_for_sync_needs_a_started_informer() -> None:
    with pytest.raises(RuntimeError, match="not started"):
        await Informer(client(), ConfigMap).wait_for_sync(0.1)


def test_store_codecs_follow_the_resource() -> None:
    typed = Informer(client(), ConfigMap)
    assert typed.store.compact
    untyped: Informer[dict[str, object]] = Informer(
        client(), GroupVersionKind("", "v1", "ConfigMap")
    )
    assert isinstance(untyped.store.codec, DictCodec)
    metadata = Informer.for_metadata(client(), ConfigMap, namespace="ns")
    assert metadata.metadata_only
    assert metadata.store.codec is not None
    assert (
        metadata.store.codec.decode(b'{"metadata":{"name":"a"}}').__class__ is PartialObjectMetadata
    )
    assert not Informer(client(), ConfigMap, compact=False).store.compact
    assert metadata.description == "ConfigMap metadata ns=ns"


def test_strip_managed_fields_from_models_and_dicts() -> None:
    fields = [{"manager": "m", "operation": "Update", "fieldsV1": {"f:data": {}}}]
    model = ConfigMap.model_validate({"metadata": {"name": "a", "managedFields": fields}})
    stripped = strip_managed_fields(model)
    assert stripped.metadata.managed_fields is None
    assert "managedFields" not in stripped.model_dump_json(by_alias=True, exclude_none=True)
    plain = {"metadata": {"name": "a", "managedFields": fields}}
    assert strip_managed_fields(plain) == {"metadata": {"name": "a"}}
    assert strip_managed_fields({"kind": "X"}) == {"kind": "X"}
