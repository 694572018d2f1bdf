"""Unit tests of the probe/metrics HTTP server over a real loopback socket."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from crdkit.runtime.http import HttpServer, Response, Stream, parse_bind_address


async def fetch(port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    data = await reader.read()
    writer.close()
    await writer.wait_closed()
    return data


@pytest.mark.parametrize(
    ("address", "parsed"),
    [(":8080", ("0.0.0.0", 8080)), ("127.0.0.1:0", ("127.0.0.1", 0)), ("0", None)],
)
def test_parse_bind_address(address: str, parsed: tuple[str, int] | None) -> None:
    assert parse_bind_address(address) == parsed


@pytest.mark.parametrize("address", ["8080", "host:", "host:x", ":70000"])
def test_parse_bind_address_rejects_nonsense(address: str) -> None:
    with pytest.raises(ValueError, match="metrics-bind-address"):
        parse_bind_address(address, field="metrics-bind-address")


async def test_routes_status_codes_and_head() -> None:
    async def ok() -> Response:
        return Response(200, b"ok\n")

    async def broken() -> Response:
        raise RuntimeError("boom")

    server = HttpServer({"/healthz": ok, "/broken": broken})
    await server.start("127.0.0.1", 0)
    try:
        answer = await fetch(server.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
        assert answer.endswith(b"\r\n\r\nok\n")
        head = await fetch(server.port, b"HEAD /healthz?verbose HTTP/1.1\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        assert head.endswith(b"\r\n\r\n")
        assert (await fetch(server.port, b"GET /nope HTTP/1.1\r\n\r\n")).startswith(b"HTTP/1.1 404")
        assert (await fetch(server.port, b"POST /healthz HTTP/1.1\r\n\r\n")).startswith(
            b"HTTP/1.1 405"
        )
        assert (await fetch(server.port, b"GET /broken HTTP/1.1\r\n\r\n")).startswith(
            b"HTTP/1.1 500"
        )
    finally:
        await server.close()


async def test_a_stream_is_written_as_it_comes_and_ends_with_its_iterator() -> None:
    more = asyncio.Event()
    closed: list[bool] = []

    async def chunks() -> AsyncIterator[bytes]:
        try:
            yield b"first\n"
            await more.wait()
            yield b"second\n"
        finally:
            closed.append(True)

    async def stream() -> Stream:
        return Stream(chunks(), headers={"Cache-Control": "no-cache"})

    server = HttpServer({"/events": stream})
    await server.start("127.0.0.1", 0)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /events HTTP/1.1\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        assert b"Content-Type: text/event-stream" in head
        assert b"Cache-Control: no-cache\r\n" in head
        assert b"Content-Length" not in head
        # The first chunk arrives while the iterator still waits for the second.
        assert await asyncio.wait_for(reader.readline(), 5) == b"first\n"
        more.set()
        assert await asyncio.wait_for(reader.read(), 5) == b"second\n"
        assert closed == [True]
        writer.close()
        await writer.wait_closed()
        # HEAD answers the headers only and closes the iterator unstarted.
        head_only = await fetch(server.port, b"HEAD /events HTTP/1.1\r\n\r\n")
        assert head_only.endswith(b"\r\n\r\n")
    finally:
        await server.close()


async def test_closing_the_server_ends_open_streams(caplog: pytest.LogCaptureFixture) -> None:
    closed = asyncio.Event()

    async def forever() -> AsyncIterator[bytes]:
        try:
            yield b"hello\n"
            await asyncio.Event().wait()
            yield b"never\n"  # pragma: no cover - the wait never ends
        finally:
            closed.set()

    async def stream() -> Stream:
        return Stream(forever())

    server = HttpServer({"/events": stream})
    await server.start("127.0.0.1", 0)
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"GET /events HTTP/1.1\r\n\r\n")
    await reader.readuntil(b"hello\n")
    started = asyncio.get_running_loop().time()
    await server.close()
    assert asyncio.get_running_loop().time() - started < 2  # not the 5 s wait for clients
    await asyncio.wait_for(closed.wait(), 2)
    assert await asyncio.wait_for(reader.read(), 2) == b""  # the body ended with the close
    writer.close()
    await asyncio.sleep(0)  # asyncio's server looks at the ended handler on the next turn
    # The stream's end is no error: nothing is logged (a cancelled handler task was).
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_stream_ends_when_its_client_goes() -> None:
    closed = asyncio.Event()

    async def ticks() -> AsyncIterator[bytes]:
        try:
            while True:
                yield b"tick\n"
                await asyncio.sleep(0.01)
        finally:
            closed.set()

    async def stream() -> Stream:
        return Stream(ticks())

    server = HttpServer({"/events": stream})
    await server.start("127.0.0.1", 0)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /events HTTP/1.1\r\n\r\n")
        await reader.readuntil(b"tick\n")
        writer.close()
        await writer.wait_closed()
        await asyncio.wait_for(closed.wait(), 5)
    finally:
        await server.close()
