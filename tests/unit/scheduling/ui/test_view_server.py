"""The page's server on a loopback port with a made-up view: the page and its assets, the
snapshot as JSON, and the event stream (the snapshot whole, then deltas, then heartbeats)."""

from __future__ import annotations

import asyncio
import json
import ssl
from typing import Any

import pytest

from crdkit.client import Client, ClientConfig
from crdkit.scheduling.ui import server as server_module
from crdkit.scheduling.ui.delta import apply
from crdkit.scheduling.ui.preview import PreviewView
from crdkit.scheduling.ui.server import ViewServer


async def _get(port: int, path: str, context: ssl.SSLContext | None = None) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    await writer.wait_closed()
    return data


def _body(answer: bytes) -> bytes:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    return body


async def _event(reader: asyncio.StreamReader) -> dict[str, str]:
    """The next event's fields (a comment comes back as ``{"comment": ...}``)."""
    block = (await asyncio.wait_for(reader.readuntil(b"\n\n"), 10)).decode()
    fields: dict[str, str] = {}
    for line in block.strip("\n").split("\n"):
        name, _, value = line.partition(":")
        fields[name or "comment"] = value.removeprefix(" ")
    return fields


async def test_the_page_its_assets_and_the_snapshot() -> None:
    view = PreviewView(64)
    server = ViewServer(view, "127.0.0.1:0")
    await server.start()
    try:
        assert server.url == f"http://127.0.0.1:{server.port}/ui/"
        page = _body(await _get(server.port, "/ui/"))
        assert b'<script src="/ui/app.js">' in page
        # The root answers the same routes.
        assert _body(await _get(server.port, "/")) == page
        assert _body(await _get(server.port, "/app.js")) == _body(
            await _get(server.port, "/ui/app.js")
        )
        assert json.loads(_body(await _get(server.port, "/view.json")))["seq"] == view.seq
        assert b"EventSource" in _body(await _get(server.port, "/ui/app.js"))
        assert b".node" in _body(await _get(server.port, "/ui/app.css"))
        answer = await _get(server.port, "/ui/view.json")
        assert b"Content-Type: application/json" in answer
        snapshot = json.loads(_body(answer))
        assert snapshot == view.snapshot()
        assert len(snapshot["nodes"]) == 64
        assert (await _get(server.port, "/ui/nope")).startswith(b"HTTP/1.1 404")
    finally:
        await server.close()


async def test_the_stream_sends_the_snapshot_whole_then_what_changed() -> None:
    view = PreviewView(64)
    server = ViewServer(view, "127.0.0.1:0")
    await server.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        # /events is /ui/events at the root.
        writer.write(b"GET /events HTTP/1.1\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        assert b"Content-Type: text/event-stream" in head
        assert b"Cache-Control: no-cache" in head
        first = await _event(reader)
        assert first["retry"] == "2000"
        assert first["event"] == "full"
        held: Any = json.loads(first["data"])
        assert held == view.snapshot()
        for _ in range(3):
            await view.advance()
            event = await _event(reader)
            assert event["event"] == "delta"
            assert event["id"] == str(view.seq)
            change = json.loads(event["data"])
            # Only what changed: a few nodes of the 64, never all of them.
            assert 0 < len(change["nodes"]) < 64
            held = apply(held, change)
            assert held == view.snapshot()
        writer.close()
        await writer.wait_closed()
    finally:
        await server.close()


async def test_a_quiet_stream_sends_heartbeats(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_module, "HEARTBEAT", 0.05)
    server = ViewServer(PreviewView(8), "127.0.0.1:0")
    await server.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /ui/events HTTP/1.1\r\n\r\n")
        await reader.readuntil(b"\r\n\r\n")
        assert (await _event(reader))["event"] == "full"
        assert await _event(reader) == {"comment": "heartbeat"}
        writer.close()
        await writer.wait_closed()
    finally:
        await server.close()


@pytest.mark.parametrize("address", ["8090", "host:x", ":70000", "0"])
def test_a_bad_address_names_the_option(address: str) -> None:
    with pytest.raises(ValueError, match="ui_bind_address"):
        ViewServer(PreviewView(8), address)


async def test_secure_serving_refuses_a_caller_without_a_token() -> None:
    async with Client(ClientConfig("https://apiserver.invalid")) as client:
        server = ViewServer(PreviewView(8), "127.0.0.1:0", secure=True)
        await server.start(client)
        try:
            assert server.url.startswith("https://")
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            for path in ("/ui/", "/ui/events", "/ui/view.json"):
                answer = await _get(server.port, path, context)
                assert answer.startswith(b"HTTP/1.1 401"), answer[:80]
        finally:
            await server.close()


async def test_off_loopback_plain_serving_warns(caplog: pytest.LogCaptureFixture) -> None:
    server = ViewServer(PreviewView(8), "0.0.0.0:0")
    await server.start()
    try:
        assert server.url == f"http://localhost:{server.port}/ui/"
    finally:
        await server.close()
    assert "plain HTTP" in caplog.text


async def test_as_a_runnable_it_serves_until_cancelled() -> None:
    from types import SimpleNamespace

    server = ViewServer(PreviewView(8), "127.0.0.1:0")
    assert server.needs_leader is False
    running = asyncio.create_task(server.run(SimpleNamespace(client=None)))  # type: ignore[arg-type]
    async with asyncio.timeout(30):
        url = await server.listening()
    port = server.port
    assert url == f"http://127.0.0.1:{port}/ui/"
    assert _body(await _get(port, "/ui/view.json"))
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    with pytest.raises(ConnectionRefusedError):
        await _get(port, "/ui/")


async def test_a_changed_node_set_is_sent_whole() -> None:
    view = PreviewView(16)
    server = ViewServer(view, "127.0.0.1:0")
    await server.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /ui/events HTTP/1.1\r\n\r\n")
        await reader.readuntil(b"\r\n\r\n")
        assert (await _event(reader))["event"] == "full"
        # A node joins: no delta can say where it goes in the grid.
        await view.advance()
        grown = {**view.snapshot(), "seq": view.seq + 1}
        grown["nodes"] = [*grown["nodes"], {**grown["nodes"][0], "name": "gpu-new"}]
        await view.show(grown)
        event = await _event(reader)
        while event["event"] == "delta":  # the advance's own delta may come first
            event = await _event(reader)
        assert event["event"] == "full"
        assert json.loads(event["data"]) == grown
        writer.close()
        await writer.wait_closed()
    finally:
        await server.close()
