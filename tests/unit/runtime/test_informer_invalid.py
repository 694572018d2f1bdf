"""Objects the informer's type refuses (no apiserver): kept out of the store, reported once
per resourceVersion, never stopping the list or the watch."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from _scripted_informer import ScriptedConfigMaps, raw, refused_count, scripted_informer
from crdkit.client import Gone, object_key
from crdkit.client.codec import RawListPage, codec_for
from crdkit.client.watch import WatchEvent
from crdkit.resources import ConfigMap, KubernetesObject
from crdkit.runtime.informer import Backoff, Informer
from crdkit.runtime.invalid_objects import INVALID_OBJECT_REASON, InvalidObjects
from crdkit.testing import eventually

HANG = "hang"
GONE = "gone"


def cm(name: str, version: str, value: object = "v") -> dict[str, Any]:
    """A ConfigMap's JSON; a ``value`` that is not a string makes the model refuse it."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "resourceVersion": version,
            "uid": f"uid-{name}",
        },
        "data": {"k": value},
    }


def page(*objects: dict[str, Any], version: str = "10") -> list[RawListPage]:
    return [RawListPage([raw(obj) for obj in objects], version, None)]


def event(kind: str, obj: dict[str, Any]) -> bytes:
    return raw({"type": kind, "object": obj})


class ScriptedClient(ScriptedConfigMaps):
    """Serves the given lists in turn; each watch parses its lines, then ends with 410 Gone
    (the informer relists) or stays open."""

    def __init__(
        self, lists: list[list[RawListPage]], watches: list[tuple[list[bytes], str]]
    ) -> None:
        super().__init__(lists, watches)
        self.watch_options: list[dict[str, object]] = []

    async def watch_resolved(
        self, target: object, **options: object
    ) -> AsyncIterator[WatchEvent[ConfigMap]]:
        self.watch_options.append(options)
        lines, end = self.watches.pop(0)
        async for parsed in self.parsed(lines, options):
            yield parsed
        if end == GONE:
            raise Gone("too old resource version", code=410)
        await asyncio.Event().wait()


class Seen:
    def __init__(self) -> None:
        self.added: list[str] = []
        self.updated: list[str] = []
        self.deleted: list[str] = []

    def on_add(self, obj: ConfigMap) -> None:
        self.added.append(f"{object_key(obj)}@{obj.metadata.resource_version}")

    def on_update(self, old: ConfigMap, new: ConfigMap) -> None:
        self.updated.append(f"{object_key(new)}@{new.metadata.resource_version}")

    def on_delete(self, obj: ConfigMap) -> None:
        self.deleted.append(f"{object_key(obj)}@{obj.metadata.resource_version}")


class FakeRecorder:
    """Collects what would be recorded as Events (the real recorder is tested live)."""

    def __init__(self) -> None:
        self.events: list[tuple[KubernetesObject, str, str, str]] = []

    async def event(
        self, regarding: KubernetesObject, type_: str, reason: str, note: str = "", **_: Any
    ) -> None:
        self.events.append((regarding, type_, reason, note))


def informer_for(
    fake: ScriptedClient, registry: CollectorRegistry, recorder: FakeRecorder | None = None
) -> tuple[Informer[ConfigMap], Seen]:
    informer = scripted_informer(fake, registry, Backoff(0.01, 0.02), event_recorder=recorder)
    seen = Seen()
    informer.add_event_handler(seen.on_add, seen.on_update, seen.on_delete)
    return informer, seen


async def relisted(informer: Informer[ConfigMap]) -> None:
    async def twice() -> bool:
        return informer.list_count == 2

    await eventually(twice, 30, "a relist")


def warnings_about(caplog: pytest.LogCaptureFixture, key: str) -> list[str]:
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    return [message for message in warnings if f" {key} " in message and "not a valid" in message]


async def test_a_refused_item_does_not_stop_the_list(caplog: pytest.LogCaptureFixture) -> None:
    fake = ScriptedClient([page(cm("a", "1"), cm("bad", "2", value=1), cm("c", "3"))], [([], HANG)])
    registry = CollectorRegistry()
    informer, seen = informer_for(fake, registry)
    async with informer:
        assert await informer.wait_for_sync(10)
        await informer.drain()
    assert sorted(informer.store.keys()) == ["ns/a", "ns/c"]
    assert seen.added == ["ns/a@1", "ns/c@3"]
    assert list(informer.invalid) == ["ns/bad"]
    assert informer.invalid["ns/bad"].paths == ["data.k"]
    assert refused_count(registry) == 1
    [warning] = warnings_about(caplog, "ns/bad")
    assert "resourceVersion 2" in warning
    assert "data.k: Input should be a valid string" in warning
    assert fake.watch_options[0]["lenient"] is True


async def test_a_relist_reports_a_version_once_and_a_fixed_version_enters_as_an_add(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = ScriptedClient(
        [
            page(cm("a", "1"), cm("bad", "2", value=1)),
            page(cm("a", "1"), cm("bad", "2", value=1)),  # the same version: said already
            page(cm("a", "1"), cm("bad", "5")),  # fixed
        ],
        [([], GONE), ([], GONE), ([], HANG)],
    )
    registry = CollectorRegistry()
    informer, seen = informer_for(fake, registry)
    async with informer:

        async def relisted_twice() -> bool:
            return informer.list_count == 3

        await eventually(relisted_twice, 30, "two relists")
        await informer.drain()
    assert seen.added == ["ns/a@1", "ns/bad@5"]
    assert seen.updated == seen.deleted == []
    assert informer.invalid == {}
    assert informer.store.version_of("ns/bad") == "5"
    assert refused_count(registry) == 1
    assert len(warnings_about(caplog, "ns/bad")) == 1


async def test_a_stored_object_whose_new_version_is_refused_leaves_the_store_as_deleted() -> None:
    fake = ScriptedClient(
        [page(cm("a", "1"), cm("b", "2")), page(cm("a", "3", value=1), cm("b", "2"))],
        [([], GONE), ([], HANG)],
    )
    informer, seen = informer_for(fake, CollectorRegistry())
    async with informer:
        await relisted(informer)
        await informer.drain()
    # The handlers saw the last valid version go; nobody reads a version the server left.
    assert seen.deleted == ["ns/a@1"]
    assert informer.store.keys() == ["ns/b"]
    assert informer.invalid["ns/a"].resource_version == "3"


async def test_a_stored_object_refused_in_the_watch_leaves_the_store_at_once() -> None:
    fake = ScriptedClient(
        [page(cm("a", "1"))], [([event("MODIFIED", cm("a", "5", value=1))], HANG)]
    )
    informer, seen = informer_for(fake, CollectorRegistry())
    async with informer:

        async def watched() -> bool:
            return informer.resource_version == "5"

        await eventually(watched, 30, "the refused MODIFIED applied")
        await informer.drain()
        assert informer.store.keys() == []
        assert seen.deleted == ["ns/a@1"]
        assert list(informer.invalid) == ["ns/a"]


async def test_a_refused_object_deleted_while_relisting_is_forgotten() -> None:
    fake = ScriptedClient(
        [page(cm("bad", "2", value=1)), page(cm("a", "4"))], [([], GONE), ([], HANG)]
    )
    informer, seen = informer_for(fake, CollectorRegistry())
    async with informer:
        await relisted(informer)
        await informer.drain()
    assert informer.invalid == {}
    assert seen.added == ["ns/a@4"]
    assert seen.deleted == []


async def test_the_watch_goes_on_past_a_refused_object(caplog: pytest.LogCaptureFixture) -> None:
    lines = [
        event("ADDED", cm("bad", "3", value=1)),
        event("ADDED", cm("late", "4")),  # created after the poison: must arrive
        event("MODIFIED", cm("a", "5", value=1)),  # a stored object turns invalid
        event("MODIFIED", cm("bad", "6")),  # fixed
        event("DELETED", cm("a", "7", value=1)),  # an invalid object is deleted
    ]
    fake = ScriptedClient([page(cm("a", "1"))], [(lines, HANG)])
    registry = CollectorRegistry()
    informer, seen = informer_for(fake, registry)
    async with informer:

        async def watched_all() -> bool:
            return informer.resource_version == "7"

        await eventually(watched_all, 30, "every watch event applied")
        await informer.drain()
    assert sorted(informer.store.keys()) == ["ns/bad", "ns/late"]
    assert seen.added == ["ns/a@1", "ns/late@4", "ns/bad@6"]
    assert seen.deleted == ["ns/a@1"]  # once, when it turned invalid; not again when deleted
    assert seen.updated == []
    assert informer.invalid == {}
    assert refused_count(registry) == 2
    assert len(warnings_about(caplog, "ns/bad")) == 1
    assert len(warnings_about(caplog, "ns/a")) == 1
    assert informer.list_count == 1


async def test_a_warning_event_per_refused_version_when_given_a_recorder() -> None:
    fake = ScriptedClient(
        [page(cm("bad", "2", value=1)), page(cm("bad", "2", value=1))],
        [([], GONE), ([event("MODIFIED", cm("bad", "3", value=2))], HANG)],
    )
    recorder = FakeRecorder()
    informer, _ = informer_for(fake, CollectorRegistry(), recorder)
    async with informer:

        async def two_events() -> bool:
            return len(recorder.events) == 2 and informer.resource_version == "3"

        await eventually(two_events, 30, "an Event per refused version")
    assert informer.list_count == 2
    assert [e[1:3] for e in recorder.events] == [("Warning", INVALID_OBJECT_REASON)] * 2
    regarding = [e[0] for e in recorder.events]
    assert [(r.kind, r.api_version) for r in regarding] == [("ConfigMap", "v1")] * 2
    assert [r.metadata.name for r in regarding] == ["bad", "bad"]
    assert [r.metadata.uid for r in regarding] == ["uid-bad", "uid-bad"]
    assert [r.metadata.resource_version for r in regarding] == ["2", "3"]
    note = recorder.events[0][3]
    assert "not a valid ConfigMap" in note
    assert "data.k: Input should be a valid string" in note


def test_refusing_is_once_per_key_and_version() -> None:
    invalid = codec_for(ConfigMap).try_decode(raw(cm("bad", "2", value=1)))
    newer = codec_for(ConfigMap).try_decode(raw(cm("bad", "3", value=1)))
    tracked = InvalidObjects("test", registry=CollectorRegistry())
    assert not isinstance(invalid, ConfigMap)
    assert not isinstance(newer, ConfigMap)
    assert tracked.refuse(invalid)
    assert not tracked.refuse(invalid)
    assert tracked.is_reported("ns/bad", "2")
    assert tracked.refuse(newer)
    assert not tracked.is_reported("ns/bad", "2")
    tracked.forget("ns/bad")
    assert "ns/bad" not in tracked
    assert tracked.refuse(newer)  # forgotten (deleted, or stored valid): reported anew
    tracked.retain([])
    assert len(tracked) == 0
