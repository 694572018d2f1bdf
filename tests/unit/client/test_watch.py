"""The watch stream parser: line reassembly, typed events, bookmarks, ERROR events."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crdkit.client.codec import DictCodec, codec_for
from crdkit.client.errors import DecodeError, Gone, RequestTimeout, TransportError
from crdkit.client.watch import BOOKMARK, LineBuffer, WatchParser
from crdkit.resources import ConfigMap


def line(kind: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": kind, "object": obj}, separators=(",", ":")).encode()


def cm(name: str, version: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": version},
        "data": {"k": "v"},
    }


@given(
    st.lists(st.binary(min_size=1, max_size=40).filter(lambda b: b"\n" not in b), max_size=8),
    st.lists(st.integers(1, 50), min_size=1, max_size=20),
)
def test_line_buffer_reassembles_any_chunking(lines: list[bytes], cuts: list[int]) -> None:
    lines = [chunk for chunk in lines if chunk.strip()]
    stream = b"".join(chunk + b"\n" for chunk in lines)
    buffer = LineBuffer()
    out: list[bytes] = []
    position = 0
    for cut in cuts * (len(stream) // max(1, sum(cuts)) + 1):
        if position >= len(stream):
            break
        out += buffer.feed(stream[position : position + cut])
        position += cut
    out += buffer.feed(stream[position:])
    assert out == lines
    assert buffer.flush() is None


def test_line_buffer_keeps_an_unterminated_last_line() -> None:
    buffer = LineBuffer()
    assert buffer.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert buffer.feed(b":2}") == []
    assert buffer.flush() == b'{"b":2}'


def test_line_buffer_refuses_endless_lines() -> None:
    buffer = LineBuffer(max_line=10)
    with pytest.raises(DecodeError):
        buffer.feed(b"x" * 11)


def test_typed_event_tracks_version_and_keeps_raw_object() -> None:
    parser = WatchParser(codec_for(ConfigMap), "1")
    raw = line("MODIFIED", cm("a", "7"))
    event = parser.parse_line(raw)
    assert event.type == "MODIFIED"
    assert isinstance(event.object, ConfigMap)
    assert event.object.metadata.name == "a"
    assert event.resource_version == parser.resource_version == "7"
    assert event.raw is not None
    assert json.loads(event.raw) == cm("a", "7")


def test_bookmark_advances_version_without_an_object() -> None:
    parser = WatchParser(codec_for(ConfigMap), "1")
    bookmark = line("BOOKMARK", {"kind": "ConfigMap", "metadata": {"resourceVersion": "42"}})
    event = parser.parse_line(bookmark)
    assert (event.type, event.object, event.resource_version) == (BOOKMARK, None, "42")
    assert parser.resource_version == "42"


def test_bookmark_in_another_field_order_is_still_a_bookmark() -> None:
    parser = WatchParser(codec_for(ConfigMap))
    text = json.dumps({"object": {"metadata": {"resourceVersion": "9"}}, "type": "BOOKMARK"})
    assert parser.parse_line(text.encode()).type == BOOKMARK
    assert parser.resource_version == "9"


def test_error_event_raises_the_mapped_status() -> None:
    parser = WatchParser(DictCodec())
    status = {
        "kind": "Status",
        "code": 410,
        "reason": "Expired",
        "message": "too old resource version: 1 (5)",
    }
    with pytest.raises(Gone, match="too old resource version"):
        parser.parse_line(line("ERROR", status))


def test_garbage_is_a_decode_error() -> None:
    with pytest.raises(DecodeError):
        WatchParser(codec_for(ConfigMap)).parse_line(b'{"type":"ADDED","object":{"kind":"Pod"}}')
    with pytest.raises(DecodeError):
        WatchParser(DictCodec()).parse_line(b"not json")


def refused_cm(name: str, version: str) -> dict[str, Any]:
    """A ConfigMap whose ``data`` the ConfigMap model refuses (a value is not a string)."""
    return {**cm(name, version), "data": {"k": 1}}


def test_a_lenient_parser_yields_a_refused_object_and_advances_the_version() -> None:
    parser = WatchParser(codec_for(ConfigMap), "1", lenient=True)
    event = parser.parse_line(line("MODIFIED", refused_cm("bad", "8")))
    assert (event.type, event.object, event.resource_version) == ("MODIFIED", None, "8")
    assert parser.resource_version == "8"
    assert event.invalid is not None
    assert (event.invalid.key, event.invalid.paths) == ("ns/bad", ["data.k"])
    assert event.raw is not None
    assert json.loads(event.raw) == refused_cm("bad", "8")
    # The watch goes on: the next line decodes as usual.
    after = parser.parse_line(line("ADDED", cm("good", "9")))
    assert isinstance(after.object, ConfigMap)
    assert after.invalid is None


def test_a_lenient_parser_reports_the_deletion_of_a_refused_object() -> None:
    event = WatchParser(codec_for(ConfigMap), lenient=True).parse_line(
        line("DELETED", refused_cm("bad", "10"))
    )
    assert event.type == "DELETED"
    assert event.invalid is not None
    assert event.invalid.key == "ns/bad"


def test_a_strict_parser_still_raises_for_a_refused_object() -> None:
    with pytest.raises(DecodeError, match="not a valid ConfigMap event"):
        WatchParser(codec_for(ConfigMap)).parse_line(line("ADDED", refused_cm("bad", "8")))


def test_a_lenient_parser_raises_for_lines_it_cannot_attribute_to_an_object() -> None:
    parser = WatchParser(codec_for(ConfigMap), lenient=True)
    with pytest.raises(DecodeError):  # no metadata.name: nothing to keep out
        parser.parse_line(b'{"type":"ADDED","object":{"kind":"Pod","metadata":3}}')
    with pytest.raises(DecodeError):
        parser.parse_line(b'{"type":"ADDED"}')


class Chunks:
    """A body delivered in fixed chunks, then optionally a failure."""

    def __init__(self, data: bytes, size: int, fail: BaseException | None = None) -> None:
        self.parts = [data[i : i + size] for i in range(0, len(data), size)]
        self.fail = fail

    async def readany(self) -> bytes:
        if self.parts:
            return self.parts.pop(0)
        if self.fail is not None:
            raise self.fail
        return b""


async def test_events_across_chunks_and_a_final_line_without_newline() -> None:
    body = line("ADDED", cm("a", "2")) + b"\n" + line("DELETED", cm("a", "3"))
    parser = WatchParser(DictCodec())
    events = [e async for e in parser.events(Chunks(body, 7))]
    assert [e.type for e in events] == ["ADDED", "DELETED"]
    assert parser.resource_version == "3"


async def test_broken_connection_becomes_transport_error() -> None:
    from crdkit.client.http1 import ConnectionBroken

    parser = WatchParser(DictCodec())
    source = Chunks(line("ADDED", cm("a", "2")) + b"\n", 5, ConnectionBroken("reset"))
    seen: list[object] = []

    async def consume() -> None:
        async for event in parser.events(source):
            seen.append(event)

    with pytest.raises(TransportError):
        await consume()
    assert len(seen) == 1
    assert parser.resource_version == "2"  # where to resume


async def test_silence_becomes_request_timeout_with_the_version_to_resume_from() -> None:
    parser = WatchParser(DictCodec())
    source = Chunks(line("BOOKMARK", cm("", "9")) + b"\n", 100, TimeoutError())
    with pytest.raises(RequestTimeout, match="idle"):
        async for _ in parser.events(source):
            pass
    assert parser.resource_version == "9"


async def test_client_watch_asks_for_bookmarks_and_uses_the_configured_idle_timeout() -> None:
    import asyncio

    from aiohttp import web

    from crdkit.client import Client, ClientConfig, Timeouts

    queries: list[dict[str, str]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        queries.append(dict(request.query))
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(line("BOOKMARK", cm("", "12")) + b"\n")
        await asyncio.sleep(30)  # then silence: a dead connection, as far as anyone can tell
        return response

    app = web.Application()
    app.router.add_get("/api/v1/namespaces/ns/configmaps", handler)
    runner = web.AppRunner(app, shutdown_timeout=0.2)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    config = ClientConfig(
        server=f"http://127.0.0.1:{runner.addresses[0][1]}", timeouts=Timeouts(watch_idle=0.3)
    )
    events = []

    async def follow(client: Client) -> None:
        async for event in client.watch(ConfigMap, namespace="ns", resource_version="5"):
            events.append(event)

    try:
        async with Client(config) as client:
            with pytest.raises(RequestTimeout, match=r"for 0\.3s.*resume from 12"):
                await follow(client)
    finally:
        await runner.cleanup()
    assert [e.type for e in events] == [BOOKMARK]
    [query] = queries
    assert query["allowWatchBookmarks"] == "true"
    assert query["watch"] == "true"
    assert query["resourceVersion"] == "5"
    assert 300 <= int(query["timeoutSeconds"]) <= 600  # the server's end, far beyond the idle
