"""What the informer tests without an apiserver (tests/unit/runtime, tests/property/runtime)
share: a client that serves scripted ConfigMap lists and watch lines, imported by module name
(this folder is on ``sys.path``, through tests/conftest.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

from prometheus_client import CollectorRegistry

from crdkit.client.codec import RawListPage, codec_for
from crdkit.client.watch import WatchEvent, WatchParser
from crdkit.resources import ConfigMap, resource_info
from crdkit.runtime.informer import Backoff, Informer


def raw(obj: dict[str, Any]) -> bytes:
    """``obj`` as the apiserver sends it: compact JSON."""
    return json.dumps(obj, separators=(",", ":")).encode()


class ScriptedConfigMaps:
    """The part of a client an `Informer` of ConfigMaps uses: serves ``lists`` in turn; each
    watch takes the next of ``watches``, whose lines `parsed` turns into events (a subclass's
    ``watch_resolved`` decides how each watch ends)."""

    def __init__(self, lists: list[list[RawListPage]], watches: list[Any]) -> None:
        self.target = SimpleNamespace(codec=codec_for(ConfigMap), info=resource_info(ConfigMap))
        self.lists = lists
        self.watches = watches

    async def resolve(self, resource: object, *, metadata_only: bool = False) -> object:
        return self.target

    async def list_raw_pages(self, target: object, **options: object) -> AsyncIterator[RawListPage]:
        for listed in self.lists.pop(0):
            yield listed

    async def parsed(
        self, lines: list[bytes], options: dict[str, object]
    ) -> AsyncIterator[WatchEvent[ConfigMap]]:
        parser = WatchParser(codec_for(ConfigMap), lenient=bool(options.get("lenient")))
        for line in lines:
            yield parser.parse_line(line)


def scripted_informer(
    client: ScriptedConfigMaps, registry: CollectorRegistry, backoff: Backoff, **options: Any
) -> Informer[ConfigMap]:
    """An informer of ConfigMaps on ``client``, without resyncs."""
    return Informer(
        client,  # type: ignore[arg-type]
        ConfigMap,
        resync_period=None,
        backoff=backoff,
        registry=registry,
        **options,
    )


def refused_count(registry: CollectorRegistry) -> float | None:
    """The informer's count of refused ConfigMap versions."""
    return registry.get_sample_value(
        "crdkit_informer_decode_errors_total", {"group": "", "kind": "ConfigMap"}
    )
