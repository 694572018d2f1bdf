"""The raw request layer against a real local HTTP server: status checks, 429 retries with
Retry-After, one credential refresh on 401, timeouts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web

from crdkit.client.config import ClientConfig, Timeouts
from crdkit.client.errors import (
    NotFound,
    RequestTimeout,
    TooManyRequests,
    TransportError,
    Unauthorized,
)
from crdkit.client.transport import Transport, retry_after_seconds

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Handler], Awaitable[str]]]:
    runners: list[web.AppRunner] = []

    async def start(handler: Handler) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        port = runner.addresses[0][1]
        return f"http://127.0.0.1:{port}"

    yield start
    for runner in runners:
        await runner.cleanup()


def status(code: int, reason: str) -> web.Response:
    body = {"kind": "Status", "code": code, "reason": reason, "message": f"{reason} here"}
    return web.json_response(body, status=code)


class CountingCredentials:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.invalidated = 0

    async def authorization(self) -> str | None:
        return f"Bearer {self.tokens[0]}"

    def invalidate(self) -> None:
        self.invalidated += 1
        self.tokens.pop(0)


async def test_ok_body_and_headers(serve: Callable[[Handler], Awaitable[str]]) -> None:
    seen: dict[str, str] = {}

    async def handler(request: web.Request) -> web.Response:
        seen.update(request.headers)
        seen["selector"] = request.query["labelSelector"]
        return web.json_response({"ok": True})

    url = await serve(handler)
    transport = Transport(ClientConfig(server=url))
    await transport.open()
    try:
        body = await transport.request(
            "GET", "/api/v1/pods", params=[("labelSelector", "a in (b,c)")]
        )
    finally:
        await transport.close()
    assert json.loads(body) == {"ok": True}
    assert seen["Accept"] == "application/json"
    assert seen["User-Agent"].startswith("crdkit/")
    assert seen["Accept-Encoding"] == "identity"  # compression is opt-in
    assert seen["selector"] == "a in (b,c)"  # encoded on the wire, intact on arrival


async def test_error_status_is_raised(serve: Callable[[Handler], Awaitable[str]]) -> None:
    async def handler(request: web.Request) -> web.Response:
        return status(404, "NotFound")

    transport = Transport(ClientConfig(server=await serve(handler)))
    await transport.open()
    try:
        with pytest.raises(NotFound, match="NotFound here"):
            await transport.request("GET", "/x")
    finally:
        await transport.close()


async def test_429_is_retried_after_retry_after(serve: Callable[[Handler], Awaitable[str]]) -> None:
    calls: list[float] = []

    async def handler(request: web.Request) -> web.Response:
        calls.append(asyncio.get_running_loop().time())
        if len(calls) < 3:
            response = status(429, "TooManyRequests")
            response.headers["Retry-After"] = "0.2"
            return response
        return web.json_response({"done": True})

    transport = Transport(ClientConfig(server=await serve(handler)))
    await transport.open()
    try:
        assert json.loads(await transport.request("POST", "/x", body=b"{}")) == {"done": True}
    finally:
        await transport.close()
    assert len(calls) == 3
    assert calls[1] - calls[0] >= 0.19


async def test_429_retries_are_bounded(serve: Callable[[Handler], Awaitable[str]]) -> None:
    calls = 0

    async def handler(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        response = status(429, "TooManyRequests")
        response.headers["Retry-After"] = "3600"  # capped by max_retry_wait
        return response

    transport = Transport(ClientConfig(server=await serve(handler)), max_retries=2)
    transport.max_retry_wait = 0.05
    await transport.open()
    try:
        with pytest.raises(TooManyRequests):
            await transport.request("GET", "/x")
    finally:
        await transport.close()
    assert calls == 3  # the first try and two retries


async def test_401_refreshes_credentials_once(serve: Callable[[Handler], Awaitable[str]]) -> None:
    async def handler(request: web.Request) -> web.Response:
        if request.headers.get("Authorization") == "Bearer fresh":
            return web.json_response({"who": "fresh"})
        return status(401, "Unauthorized")

    credentials = CountingCredentials(["stale", "fresh", "never-used"])
    transport = Transport(ClientConfig(server=await serve(handler), credentials=credentials))
    await transport.open()
    try:
        assert json.loads(await transport.request("GET", "/x")) == {"who": "fresh"}
        credentials.tokens = ["bad", "worse", "worst"]
        with pytest.raises(Unauthorized):
            await transport.request("GET", "/x")
    finally:
        await transport.close()
    assert credentials.invalidated == 2  # one refresh per request, not a loop


async def test_read_timeout(serve: Callable[[Handler], Awaitable[str]]) -> None:
    async def handler(request: web.Request) -> web.Response:
        await asyncio.sleep(2)
        return web.json_response({})

    config = ClientConfig(server=await serve(handler), timeouts=Timeouts(connect=1, read=0.2))
    transport = Transport(config)
    await transport.open()
    try:
        with pytest.raises(RequestTimeout):
            await transport.request("GET", "/slow")
    finally:
        await transport.close()


async def test_connection_refused_is_a_transport_error() -> None:
    transport = Transport(ClientConfig(server="http://127.0.0.1:9"))
    await transport.open()
    try:
        with pytest.raises(TransportError):
            await transport.request("GET", "/")
    finally:
        await transport.close()


async def test_stream_idle_timeout(serve: Callable[[Handler], Awaitable[str]]) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(b'{"type":"BOOKMARK"}\n')
        await asyncio.sleep(2)
        return response

    transport = Transport(ClientConfig(server=await serve(handler)))
    await transport.open()
    try:
        async with transport.stream("GET", "/watch", idle_timeout=0.3) as body:
            assert await body.readany() == b'{"type":"BOOKMARK"}\n'
            with pytest.raises(TimeoutError):
                await body.readany()
    finally:
        await transport.close()


def test_retry_after_parsing() -> None:
    assert retry_after_seconds({"Retry-After": "2"}, 1.0) == 2.0
    assert retry_after_seconds({}, 1.0) == 1.0
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 1.0) == 1.0
    assert retry_after_seconds({"Retry-After": "-5"}, 1.0) == 0.0


def test_timeouts_must_be_positive() -> None:
    with pytest.raises(ValueError, match=r"Timeouts\.read"):
        Timeouts(read=0)
