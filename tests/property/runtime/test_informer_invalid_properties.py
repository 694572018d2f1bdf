"""Poison objects against a plain model of the server: whatever mix of valid and refused
versions a list, a watch and a relist bring, the informer ends with

* its store holding exactly the server's objects that validate, at their versions;
* ``invalid`` holding exactly the ones that do not (deleted ones in neither);
* its handlers' view (adds, updates and deletes replayed onto a dict) equal to the store, so
  no handler ever held a refused version as current;
* one report (the metric) per distinct refused (object, resourceVersion).

Checked where the watch has applied its last event, and again after the relist.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import hypothesis.strategies as st
from hypothesis import given, settings
from prometheus_client import CollectorRegistry

from _scripted_informer import ScriptedConfigMaps, raw, refused_count, scripted_informer
from crdkit.client import Gone, object_key
from crdkit.client.codec import RawListPage
from crdkit.client.watch import WatchEvent
from crdkit.resources import ConfigMap
from crdkit.runtime.informer import Backoff, Informer
from crdkit.testing import eventually

NAMES = ["a", "b", "c", "d"]
# (name, valid) per change; None for valid means deleted.
CHANGES = st.lists(
    st.tuples(st.sampled_from(NAMES), st.sampled_from([True, False, None])), max_size=12
)
STATE = st.dictionaries(st.sampled_from(NAMES), st.booleans())


def cm(name: str, version: int, valid: bool) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": str(version)},
        "data": {"k": "v" if valid else 1},  # the model refuses a value that is not a string
    }


class Server:
    """A plain model of the apiserver's objects: name → (version, valid)."""

    def __init__(self) -> None:
        self.objects: dict[str, tuple[int, bool]] = {}
        self.version = 0

    def write(self, name: str, valid: bool) -> bytes:
        self.version += 1
        kind = "MODIFIED" if name in self.objects else "ADDED"
        self.objects[name] = (self.version, valid)
        return raw({"type": kind, "object": cm(name, self.version, valid)})

    def delete(self, name: str) -> bytes | None:
        if name not in self.objects:
            return None
        self.version += 1
        _, valid = self.objects.pop(name)
        return raw({"type": "DELETED", "object": cm(name, self.version, valid)})

    def page(self) -> list[RawListPage]:
        items = [raw(cm(n, v, ok)) for n, (v, ok) in sorted(self.objects.items())]
        # Two pages when there is more than one item: refusals span pages too.
        half = len(items) // 2
        return [
            RawListPage(items[:half], str(self.version), "next"),
            RawListPage(items[half:], str(self.version), None),
        ]


class ScriptedClient(ScriptedConfigMaps):
    """Serves the lists in turn; after the lines of every watch but the last it pauses at a
    checkpoint (the informer has applied every line by then), then ends with 410 Gone."""

    def __init__(self, lists: list[list[RawListPage]], watches: list[list[bytes]]) -> None:
        super().__init__(lists, watches)
        self.reached = asyncio.Event()
        self.proceed = asyncio.Event()

    async def watch_resolved(
        self, target: object, **options: object
    ) -> AsyncIterator[WatchEvent[ConfigMap]]:
        async for parsed in self.parsed(self.watches.pop(0), options):
            yield parsed
        if self.watches:
            self.reached.set()
            await self.proceed.wait()
            raise Gone("too old resource version", code=410)  # relist
        await asyncio.Event().wait()


async def run(initial: dict[str, bool], changes: list[tuple[str, bool | None]], final: Any) -> None:
    server = Server()
    refused_versions: set[tuple[str, int]] = set()
    for name, valid in sorted(initial.items()):
        server.write(name, valid)
    first = server.page()
    refused_versions |= {(n, v) for n, (v, ok) in server.objects.items() if not ok}
    lines: list[bytes] = []
    for name, change in changes:
        line = server.delete(name) if change is None else server.write(name, change)
        if line is not None:
            lines.append(line)
            if change is False:
                refused_versions.add((name, server.version))
    watched = dict(server.objects)
    # Then, disconnected: the final state replaces whatever is left, seen only by a relist.
    for name in list(server.objects):
        if name not in final:
            server.delete(name)
    for name, valid in sorted(final.items()):
        if name not in server.objects or server.objects[name][1] != valid or not valid:
            server.write(name, valid)
    refused_versions |= {(n, v) for n, (v, ok) in server.objects.items() if not ok}
    relisted = server.page()
    fake = ScriptedClient([first, relisted], [lines, []])

    registry = CollectorRegistry()
    informer = scripted_informer(fake, registry, Backoff(0.001, 0.002))
    view: dict[str, str | None] = {}

    def on_add(obj: ConfigMap) -> None:
        assert object_key(obj) not in view
        view[object_key(obj)] = obj.metadata.resource_version

    def on_update(old: ConfigMap, new: ConfigMap) -> None:
        assert view.get(object_key(new)) == old.metadata.resource_version
        view[object_key(new)] = new.metadata.resource_version

    def on_delete(obj: ConfigMap) -> None:
        view.pop(object_key(obj))

    informer.add_event_handler(on_add, on_update, on_delete)
    async with informer:
        async with asyncio.timeout(30):  # a safety net: nothing waits on the clock
            await fake.reached.wait()
            await informer.drain()
            agree(informer, view, watched)
            fake.proceed.set()

            async def relisted() -> bool:
                return informer.list_count == 2

            await eventually(relisted, 30, "the relist", interval=0.001)
        await informer.drain()
    agree(informer, view, server.objects)
    assert (refused_count(registry) or 0) == len(refused_versions)


def agree(
    informer: Informer[ConfigMap], view: dict[str, str | None], objects: dict[str, tuple[int, bool]]
) -> None:
    valid = {f"ns/{n}": str(v) for n, (v, ok) in objects.items() if ok}
    refused = {f"ns/{n}": str(v) for n, (v, ok) in objects.items() if not ok}
    stored = informer.store.keys()
    assert {key: informer.store.version_of(key) for key in stored} == valid
    assert {k: i.resource_version for k, i in informer.invalid.items()} == refused
    assert view == valid


@settings(max_examples=40, deadline=None)
@given(initial=STATE, changes=CHANGES, final=STATE)
def test_store_invalid_and_handlers_agree_with_the_server(
    initial: dict[str, bool], changes: list[tuple[str, bool | None]], final: dict[str, bool]
) -> None:
    asyncio.run(run(initial, changes, final))
