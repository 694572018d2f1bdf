"""Unit tests of the probe/metrics HTTP server over a real loopback socket."""

from __future__ import annotations

import asyncio

import pytest

from crdkit.runtime.http import HttpServer, Response, parse_bind_address


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
