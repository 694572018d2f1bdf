"""Informer pieces that need no apiserver: backoff, options, metadata-only typing, list storing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace
from typing import Any

import pytest

from crdkit.client import (
    Client,
    ClientConfig,
    DecodeError,
    Gone,
    GroupVersionKind,
    RequestTimeout,
    TooManyRequests,
    object_key,
)
from crdkit.client.codec import (
    Codec,
    DictCodec,
    InvalidObject,
    ModelCodec,
    RawListPage,
    codec_for,
)
from crdkit.resources import ConfigMap, ObjectMeta, PartialObjectMetadata, resource_info
from crdkit.runtime.informer import Backoff, Informer, strip_managed_fields
from crdkit.testing import FakeCluster, eventually


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


class ListingClient:
    """Serves a fixed list, page by page, then a watch that stays quiet (no apiserver)."""

    def __init__(self, codec: Codec[Any], pages: list[RawListPage]) -> None:
        self.target = SimpleNamespace(codec=codec, info=resource_info(ConfigMap))
        self.pages = pages

    async def resolve(self, resource: object, *, metadata_only: bool = False) -> object:
        return self.target

    async def list_raw_pages(self, target: object, **options: object) -> AsyncIterator[RawListPage]:
        for page in self.pages:
            yield page

    async def watch_resolved(self, target: object, **options: object) -> AsyncIterator[object]:
        await asyncio.Event().wait()
        yield None  # pragma: no cover


class CountingCodec(ModelCodec[ConfigMap]):
    """A ConfigMap codec that counts how often the store had to serialise an object."""

    encoded = 0

    def encode(self, obj: ConfigMap) -> bytes:
        self.encoded += 1
        return super().encode(obj)


def configmap_json(name: str, version: str) -> bytes:
    return json.dumps(
        {
            "metadata": {
                "name": name,
                "namespace": "ns",
                "resourceVersion": version,
                "managedFields": [{"manager": "m", "operation": "Update"}],
            },
            "data": {"k": name},
        },
        separators=(",", ":"),
    ).encode()


PAGES = [
    RawListPage([configmap_json("a", "1"), configmap_json("b", "2")], "5", "next"),
    RawListPage([configmap_json("c", "3")], "5", None),
]


def on_fake(fake: object, **options: Any) -> Informer[ConfigMap]:
    """A ConfigMap informer on one of the fake clients here, which never resyncs: what the
    test looks at happens only when the fake makes it happen."""
    return Informer(fake, ConfigMap, resync_period=None, **options)  # type: ignore[arg-type]


async def listed(informer: Informer[ConfigMap]) -> Informer[ConfigMap]:
    await informer.start()
    assert await informer.wait_for_sync(5)
    await informer.drain()
    await informer.stop()
    return informer


async def test_listed_objects_are_stored_as_the_servers_json() -> None:
    fake = ListingClient(codec_for(ConfigMap), PAGES)
    informer = on_fake(fake)
    spy = informer.store.codec = CountingCodec(ConfigMap)
    added: list[ConfigMap] = []
    informer.add_event_handler(on_add=added.append)
    await listed(informer)
    assert spy.encoded == 0  # nothing serialised again: the store holds the listed bytes
    expected = [codec_for(ConfigMap).decode(raw) for page in PAGES for raw in page.items]
    assert informer.store.list() == expected
    assert added == expected
    assert informer.resource_version == "5"


async def test_a_transformed_listed_object_is_stored_as_transformed() -> None:
    fake = ListingClient(codec_for(ConfigMap), PAGES)
    informer = on_fake(fake, transform=strip_managed_fields)
    spy = informer.store.codec = CountingCodec(ConfigMap)
    await listed(informer)
    assert spy.encoded == 3  # the server's bytes still hold managedFields: encoded anew
    assert [obj.metadata.managed_fields for obj in informer.store.list()] == [None] * 3
    assert sorted(informer.store.keys()) == ["ns/a", "ns/b", "ns/c"]


async def test_an_item_that_does_not_decode_fails_the_list_naming_it() -> None:
    broken = RawListPage([configmap_json("a", "1"), b'{"metadata":"nope"}'], "5", None)
    fake = ListingClient(codec_for(ConfigMap), [broken])
    informer = on_fake(fake, backoff=Backoff(5.0, 5.0))
    await informer.start()
    try:
        assert not await informer.wait_for_sync(0.5)
        assert isinstance(informer.last_error, DecodeError)
        assert "list item 1" in str(informer.last_error)
    finally:
        await informer.stop()


class DecodeCountingCodec(ModelCodec[ConfigMap]):
    """A ConfigMap codec that records the name of every object it decodes."""

    def __init__(self) -> None:
        super().__init__(ConfigMap)
        self.decoded: list[str] = []

    def try_decode(self, raw: bytes) -> ConfigMap | InvalidObject:
        obj = super().try_decode(raw)
        assert not isinstance(obj, InvalidObject)
        self.decoded.append(obj.metadata.name or "")
        return obj


class RelistingClient(ListingClient):
    """Serves one list, ends the first watch with 410 Gone, then serves the second list."""

    def __init__(self, codec: Codec[Any], first: list[RawListPage], second: list[RawListPage]):
        super().__init__(codec, first)
        self.lists = [first, second]
        self.watches = 0

    async def list_raw_pages(self, target: object, **options: object) -> AsyncIterator[RawListPage]:
        for page in self.lists.pop(0):
            yield page

    async def watch_resolved(self, target: object, **options: object) -> AsyncIterator[object]:
        self.watches += 1
        if self.watches == 1:
            raise Gone("too old resource version", code=410)
        await asyncio.Event().wait()
        yield None  # pragma: no cover


async def run_until(
    informer: Informer[Any], done: Callable[[], bool], seconds: float, *, drain: bool = False
) -> None:
    """Start ``informer``, let it run until ``done`` (checked every 10 ms, for ``seconds`` at
    most: the test's assertions then say what was missing), deliver every event first with
    ``drain``, then stop it."""
    await informer.start()
    try:
        for _ in range(round(seconds / 0.01)):
            if done():
                break
            await asyncio.sleep(0.01)
        if drain:
            await informer.drain()
    finally:
        await informer.stop()


async def run_until_relisted(informer: Informer[Any]) -> None:
    """Start ``informer``, let it list a second time (within about a second) and deliver
    every event, then stop it."""
    await run_until(informer, lambda: informer.list_count == 2, 1.0, drain=True)


async def test_a_relist_decodes_only_what_changed() -> None:
    codec = DecodeCountingCodec()
    second = [
        RawListPage([configmap_json("a", "1"), configmap_json("b", "7")], "9", "next"),
        RawListPage([configmap_json("d", "8")], "9", None),
    ]
    fake = RelistingClient(codec, PAGES, second)
    informer = on_fake(fake)
    seen: dict[str, list[str]] = {"add": [], "update": [], "delete": []}
    informer.add_event_handler(
        on_add=lambda obj: seen["add"].append(object_key(obj)),
        on_update=lambda old, new: seen["update"].append(
            f"{old.metadata.resource_version}>{new.metadata.resource_version}"
        ),
        on_delete=lambda obj: seen["delete"].append(object_key(obj)),
    )
    await run_until_relisted(informer)
    assert informer.list_count == 2
    assert codec.decoded == ["a", "b", "c", "b", "d"]  # unchanged "a" was not decoded again
    assert seen == {"add": ["ns/a", "ns/b", "ns/c", "ns/d"], "update": ["2>7"], "delete": ["ns/c"]}
    stored = informer.store.keys()
    assert {key: informer.store.version_of(key) for key in stored} == {
        "ns/a": "1",
        "ns/b": "7",
        "ns/d": "8",
    }
    assert informer.store.get("ns/a") == codec_for(ConfigMap).decode(configmap_json("a", "1"))
    assert informer.resource_version == "9"


class ThrottledWatchClient(ListingClient):
    """Lists, then answers the first watch with a 429 asking for ``retry_after`` seconds (as
    the transport raises it once its own retries ran out); later watches stay quiet."""

    def __init__(self, codec: Codec[Any], retry_after: float) -> None:
        super().__init__(codec, PAGES)
        self.retry_after = retry_after
        self.watched_at: list[float] = []
        self.options: list[dict[str, object]] = []

    async def watch_resolved(self, target: object, **options: object) -> AsyncIterator[object]:
        self.watched_at.append(asyncio.get_running_loop().time())
        self.options.append(options)
        if len(self.watched_at) == 1:
            raise TooManyRequests("slow down", code=429, retry_after=self.retry_after)
        await asyncio.Event().wait()
        yield None  # pragma: no cover


async def test_the_informer_rewatches_no_sooner_than_retry_after() -> None:
    fake = ThrottledWatchClient(codec_for(ConfigMap), retry_after=1.0)
    informer = on_fake(
        fake,
        backoff=Backoff(0.01, 0.02),  # its own backoff alone would come back at once
    )
    await run_until(informer, lambda: len(fake.watched_at) == 2, 5.0)
    assert len(fake.watched_at) == 2
    assert fake.watched_at[1] - fake.watched_at[0] >= 1.0
    assert informer.list_count == 1  # a throttled watch resumes; it does not relist
    assert isinstance(informer.last_error, TooManyRequests)


async def test_the_informer_passes_its_idle_timeout_to_each_watch() -> None:
    fake = ThrottledWatchClient(codec_for(ConfigMap), retry_after=0.0)
    informer = on_fake(fake, idle_timeout=3.0, backoff=Backoff(0.01, 0.02))
    await run_until(informer, lambda: len(fake.options) == 2, 5.0)
    assert [o["idle_timeout"] for o in fake.options] == [3.0, 3.0]
    server_timeout = fake.options[0]["timeout_seconds"]
    assert isinstance(server_timeout, int)
    assert 300 <= server_timeout <= 600
    default = Informer(client(), ConfigMap)
    assert default.idle_timeout is None  # the client's Timeouts.watch_idle then decides
    with pytest.raises(ValueError, match="idle_timeout"):
        Informer(client(), ConfigMap, idle_timeout=0)


class RecordingBackoff(Backoff):
    def __init__(self) -> None:
        super().__init__(0.05, 10.0, random=lambda: 0.0)
        self.delays: list[float] = []

    def next(self) -> float:
        delay = super().next()
        self.delays.append(delay)
        return delay


class QuietWatchClient(ListingClient):
    """Watches that stay open, silent, until the idle timeout ends them (no bookmarks)."""

    def __init__(self, codec: Codec[Any]) -> None:
        super().__init__(codec, PAGES)
        self.watches = 0

    async def watch_resolved(self, target: object, **options: object) -> AsyncIterator[object]:
        self.watches += 1
        await asyncio.sleep(1.1)
        raise RequestTimeout("watch idle timeout")
        yield None  # pragma: no cover


async def test_idle_timeouts_of_a_quiet_watch_do_not_pile_up_backoff() -> None:
    fake = QuietWatchClient(codec_for(ConfigMap))
    backoff = RecordingBackoff()
    informer = on_fake(fake, backoff=backoff)
    await run_until(informer, lambda: fake.watches >= 4, 10.0)
    assert len(backoff.delays) >= 3
    assert set(backoff.delays) == {0.05}  # each reconnect starts from the initial delay
    assert informer.list_count == 1


class UpdateCountingCodec(DecodeCountingCodec):
    """Also records the name of every object a compact store decodes (the old versions)."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded: list[str] = []

    def decode(self, raw: bytes) -> ConfigMap:
        obj = super().decode(raw)
        self.loaded.append(obj.metadata.name or "")
        return obj


@pytest.mark.parametrize("reads_old", [True, False])
async def test_the_old_version_is_decoded_only_for_a_handler_that_reads_it(
    reads_old: bool,
) -> None:
    codec = UpdateCountingCodec()
    second = [RawListPage([configmap_json("a", "1"), configmap_json("b", "7")], "9", None)]
    fake = RelistingClient(codec, PAGES, second)
    informer = on_fake(fake)
    informer.store.codec = codec
    updates: list[tuple[str | None, str | None]] = []
    informer.add_event_handler(
        on_update=lambda old, new: updates.append(
            (old.metadata.resource_version, new.metadata.resource_version)
        ),
        reads_old=reads_old,
    )
    await run_until_relisted(informer)
    # "b" changed from version 2 to 7: an update either way, its old version decoded only
    # for a handler that reads it (which then gets it).
    assert updates == ([("2", "7")] if reads_old else [("7", "7")])
    assert ("b" in codec.loaded) is reads_old


async def test_reselect_lists_again_into_the_same_store_with_events_for_the_difference() -> None:
    def labelled(name: str, team: str) -> ConfigMap:
        return ConfigMap(metadata=ObjectMeta(name=name, namespace="ns", labels={"team": team}))

    cluster = FakeCluster([labelled("a1", "a"), labelled("a2", "a"), labelled("b1", "b")])
    async with cluster.client() as fake:
        informer: Informer[ConfigMap] = Informer(
            fake, ConfigMap, namespace="ns", label_selector="team=a"
        )
        events: list[tuple[str, str]] = []
        informer.add_event_handler(
            lambda obj: events.append(("add", obj.metadata.name or "")),
            lambda _old, new: events.append(("update", new.metadata.name or "")),
            lambda obj: events.append(("delete", obj.metadata.name or "")),
        )
        await informer.start()
        try:
            await informer.wait_for_sync()
            await informer.drain()
            assert sorted(events) == [("add", "a1"), ("add", "a2")]
            events.clear()
            informer.reselect("team in (a,b)")
            informer.reselect("team in (a,b)")  # the same again: nothing more

            async def holds(*names: str) -> bool:
                await informer.drain()
                return sorted(informer.store.keys()) == [f"ns/{n}" for n in names]

            await eventually(lambda: holds("a1", "a2", "b1"), 30, "b1 selected")
            assert events == [("add", "b1")]  # the others are unchanged: not announced
            assert informer.has_synced
            assert informer.description.endswith("labels=team in (a,b)")
            events.clear()
            informer.reselect("team=b")
            await eventually(lambda: holds("b1"), 30, "only b1 left")
            assert sorted(events) == [("delete", "a1"), ("delete", "a2")]
            # The watch follows the new selector.
            await fake.create(labelled("b2", "b"))
            await fake.create(labelled("a3", "a"))
            await eventually(lambda: holds("b1", "b2"), 30, "b2 seen")
        finally:
            await informer.stop()
        assert not informer.running
