"""The raw request layer against a real local HTTP server: status checks, 429 retries with
Retry-After (requests and streams), retries after a connection reset (reads only), one
credential refresh on 401, timeouts, TCP keepalive on the sockets."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import socket
import ssl
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

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
from crdkit.client.retry import RetryPolicy
from crdkit.client.transport import ChunkStream, TcpKeepalive, Transport, keepalive_socket_factory
from crdkit.testing.envtest.certs import generate_pki

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Handler], Awaitable[str]]]:
    runners: list[web.AppRunner] = []

    async def start(handler: Handler) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handler)
        # Handlers that hang on purpose are cancelled at teardown, not waited for.
        runner = web.AppRunner(app, shutdown_timeout=0.2)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        port = runner.addresses[0][1]
        return f"http://127.0.0.1:{port}"

    yield start
    for runner in runners:
        await runner.cleanup()


@asynccontextmanager
async def opened(transport: Transport) -> AsyncIterator[Transport]:
    """The transport open for the block and closed after it, whatever the block raised."""
    await transport.open()
    try:
        yield transport
    finally:
        await transport.close()


async def streamed(request: web.Request, *chunks: bytes) -> web.StreamResponse:
    """A 200 answer whose body is streamed, starting with ``chunks``; the handler may go on
    writing to it or keep it open."""
    response = web.StreamResponse()
    await response.prepare(request)
    for chunk in chunks:
        await response.write(chunk)
    return response


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
    async with opened(Transport(ClientConfig(server=url))) as transport:
        body = await transport.request(
            "GET", "/api/v1/pods", params=[("labelSelector", "a in (b,c)")]
        )
    assert json.loads(body) == {"ok": True}
    assert seen["Accept"] == "application/json"
    assert seen["User-Agent"].startswith("crdkit/")
    assert seen["Accept-Encoding"] == "identity"  # compression is opt-in
    assert seen["selector"] == "a in (b,c)"  # encoded on the wire, intact on arrival


async def test_error_status_is_raised(serve: Callable[[Handler], Awaitable[str]]) -> None:
    async def handler(request: web.Request) -> web.Response:
        return status(404, "NotFound")

    async with opened(Transport(ClientConfig(server=await serve(handler)))) as transport:
        with pytest.raises(NotFound, match="NotFound here"):
            await transport.request("GET", "/x")


async def test_429_is_retried_after_retry_after(serve: Callable[[Handler], Awaitable[str]]) -> None:
    calls: list[float] = []

    async def handler(request: web.Request) -> web.Response:
        calls.append(asyncio.get_running_loop().time())
        if len(calls) < 3:
            response = status(429, "TooManyRequests")
            response.headers["Retry-After"] = "0.2"
            return response
        return web.json_response({"done": True})

    async with opened(Transport(ClientConfig(server=await serve(handler)))) as transport:
        assert json.loads(await transport.request("POST", "/x", body=b"{}")) == {"done": True}
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

    policy = RetryPolicy(max_retries=2, max_retry_wait=0.05)
    async with opened(
        Transport(ClientConfig(server=await serve(handler)), retry=policy)
    ) as transport:
        with pytest.raises(TooManyRequests) as raised:
            await transport.request("GET", "/x")
    assert calls == 3  # the first try and two retries
    assert raised.value.retry_after == 3600  # the header survives for the caller to honour


async def test_401_refreshes_credentials_once(serve: Callable[[Handler], Awaitable[str]]) -> None:
    async def handler(request: web.Request) -> web.Response:
        if request.headers.get("Authorization") == "Bearer fresh":
            return web.json_response({"who": "fresh"})
        return status(401, "Unauthorized")

    credentials = CountingCredentials(["stale", "fresh", "never-used"])
    async with opened(
        Transport(ClientConfig(server=await serve(handler), credentials=credentials))
    ) as transport:
        assert json.loads(await transport.request("GET", "/x")) == {"who": "fresh"}
        credentials.tokens = ["bad", "worse", "worst"]
        with pytest.raises(Unauthorized):
            await transport.request("GET", "/x")
    assert credentials.invalidated == 2  # one refresh per request, not a loop


async def test_read_timeout(serve: Callable[[Handler], Awaitable[str]]) -> None:
    async def handler(request: web.Request) -> web.Response:
        await asyncio.sleep(2)
        return web.json_response({})

    config = ClientConfig(server=await serve(handler), timeouts=Timeouts(connect=1, read=0.2))
    async with opened(Transport(config)) as transport:
        with pytest.raises(RequestTimeout):
            await transport.request("GET", "/slow")


async def test_connection_refused_is_a_transport_error() -> None:
    quick = RetryPolicy(max_retries=2, backoff_initial=0.01, backoff_max=0.02)
    async with opened(
        Transport(ClientConfig(server="http://127.0.0.1:9"), retry=quick)
    ) as transport:
        with pytest.raises(TransportError):
            await transport.request("GET", "/")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens there now: connecting is refused


async def test_an_unreachable_server_is_said_from_the_first_attempt_and_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    waits: list[float] = []

    async def no_wait(delay: float) -> None:
        waits.append(delay)

    port = _closed_port()
    server = f"http://127.0.0.1:{port}"
    transport = Transport(ClientConfig(server=server), max_retries=3, sleep=no_wait)
    await transport.open()
    runner: web.AppRunner | None = None
    try:
        assert transport.connection_problem is None
        with caplog.at_level(logging.INFO, logger="crdkit.client.transport"):
            for _ in range(2):
                with pytest.raises(TransportError):
                    await transport.request("GET", "/")
            with pytest.raises(TransportError):
                async with transport.stream("GET", "/watch"):
                    pass
        assert len(waits) == 9  # every attempt was retried as before
        problem = f"cannot reach {server}: connection refused"
        assert transport.connection_problem == problem
        # Logged at the first failed attempt, not once per attempt or request.
        assert [r.getMessage() for r in caplog.records] == [f"{problem}; retrying"]
        assert caplog.records[0].levelno == logging.WARNING

        # The apiserver comes up on that address: the next answer ends the outage.
        async def handler(request: web.Request) -> web.Response:
            return web.json_response({})

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handler)
        runner = web.AppRunner(app, shutdown_timeout=0.2)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        with caplog.at_level(logging.INFO, logger="crdkit.client.transport"):
            await transport.request("GET", "/")
        assert transport.connection_problem is None
        assert caplog.records[-1].getMessage() == f"reached {server} again"
    finally:
        await transport.close()
        if runner is not None:
            await runner.cleanup()


async def test_stream_idle_timeout(serve: Callable[[Handler], Awaitable[str]]) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = await streamed(request, b'{"type":"BOOKMARK"}\n')
        await asyncio.sleep(2)
        return response

    async with (
        opened(Transport(ClientConfig(server=await serve(handler)))) as transport,
        transport.stream("GET", "/watch", idle_timeout=0.3) as body,
    ):
        assert await body.readany() == b'{"type":"BOOKMARK"}\n'
        with pytest.raises(TimeoutError):
            await body.readany()


def test_timeouts_must_be_positive() -> None:
    with pytest.raises(ValueError, match=r"Timeouts\.read"):
        Timeouts(read=0)


def reset_connection(request: web.Request) -> web.Response:
    """Abort the connection with an RST (SO_LINGER 0), the way a crashed peer or LB does."""
    transport = request.transport
    assert transport is not None
    sock = transport.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
    return web.Response()


class Sleeps:
    """A fake ``sleep`` for the transport: records the waits and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.waits.append(delay)


async def test_get_is_retried_after_a_connection_reset(
    serve: Callable[[Handler], Awaitable[str]],
) -> None:
    seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request.method)
        if len(seen) <= 2:
            return reset_connection(request)
        return web.json_response({"third": True})

    sleeps = Sleeps()
    async with opened(
        Transport(ClientConfig(server=await serve(handler)), sleep=sleeps)
    ) as transport:
        assert json.loads(await transport.request("GET", "/x")) == {"third": True}
    assert seen == ["GET", "GET", "GET"]
    assert sleeps.waits
    assert 0.2 <= sleeps.waits[0] < 0.4  # backoff from 0.2 s with jitter


async def test_a_write_is_not_resent_after_a_connection_reset(
    serve: Callable[[Handler], Awaitable[str]],
) -> None:
    seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request.method)
        return reset_connection(request)

    async with opened(
        Transport(ClientConfig(server=await serve(handler)), sleep=Sleeps())
    ) as transport:
        with pytest.raises(TransportError):
            await transport.request("POST", "/x", body=b"{}")
    assert seen == ["POST"]  # the server may have acted on it: only its caller can tell


async def first_watch_chunk(url: str, sleeps: Sleeps) -> bytes:
    """The first chunk of a watch of ``url``, through a transport whose waits go to ``sleeps``:
    the retries before it are what the stream tests below look at."""
    async with (
        opened(Transport(ClientConfig(server=url), sleep=sleeps)) as transport,
        transport.stream("GET", "/watch", idle_timeout=5) as body,
    ):
        return await body.readany()


async def test_stream_honours_retry_after(serve: Callable[[Handler], Awaitable[str]]) -> None:
    refusals = [(429, "TooManyRequests", "5"), (503, "ServiceUnavailable", "2")]
    answers: list[int] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        if len(answers) < len(refusals):
            code, reason, retry_after = refusals[len(answers)]
            answers.append(code)
            response = status(code, reason)
            response.headers["Retry-After"] = retry_after
            return response
        answers.append(200)
        return await streamed(request, b'{"type":"BOOKMARK"}\n')

    sleeps = Sleeps()
    assert await first_watch_chunk(await serve(handler), sleeps) == b'{"type":"BOOKMARK"}\n'
    assert answers == [429, 503, 200]
    assert sleeps.waits == [5.0, 2.0]  # exactly what the server asked, nothing sooner


async def test_stream_is_reopened_after_a_connection_reset(
    serve: Callable[[Handler], Awaitable[str]],
) -> None:
    calls = 0

    async def handler(request: web.Request) -> web.StreamResponse:
        nonlocal calls
        calls += 1
        if calls <= 2:
            return reset_connection(request)
        return await streamed(request, b"{}\n")

    sleeps = Sleeps()
    assert await first_watch_chunk(await serve(handler), sleeps) == b"{}\n"
    assert calls == 3
    assert sleeps.waits  # with a backoff, not in a tight loop


async def test_stream_idle_timer_restarts_with_every_chunk(
    serve: Callable[[Handler], Awaitable[str]],
) -> None:
    # Chunks 0.05 s apart for 1.5 s: far longer in total than the 0.5 s idle timeout, but
    # never silent for that long. Only the silence after the last chunk times out.
    async def handler(request: web.Request) -> web.StreamResponse:
        response = await streamed(request)
        for _ in range(30):
            await response.write(b"x\n")
            await asyncio.sleep(0.05)
        await asyncio.sleep(30)  # cancelled at teardown
        return response

    received = b""

    async def read_all(body: ChunkStream) -> None:
        nonlocal received
        while True:
            received += await body.readany()

    async with (
        opened(Transport(ClientConfig(server=await serve(handler)))) as transport,
        transport.stream("GET", "/watch", idle_timeout=0.5) as body,
    ):
        with pytest.raises(TimeoutError):
            await read_all(body)
    assert received == b"x\n" * 30


async def test_stream_idle_timeout_defaults_to_the_config(
    serve: Callable[[Handler], Awaitable[str]],
) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = await streamed(request)
        await asyncio.sleep(30)
        return response

    config = ClientConfig(server=await serve(handler), timeouts=Timeouts(watch_idle=0.3))
    async with (
        opened(Transport(config)) as transport,
        transport.stream("GET", "/watch") as body,
    ):
        with pytest.raises(TimeoutError):
            await body.readany()


def test_default_timeouts_bound_a_silent_watch_to_two_minutes() -> None:
    # The apiserver sends a bookmark about every 60 s; the idle timeout must sit above that
    # (no reconnects on a healthy watch) and well below the 5-10 min server timeout.
    assert 60 < Timeouts().watch_idle <= 120
    with pytest.raises(ValueError, match=r"Timeouts\.watch_idle"):
        Timeouts(watch_idle=0)


def test_keepalive_socket_factory_sets_the_options() -> None:
    keepalive = TcpKeepalive(idle=20, interval=5, count=4)
    make = keepalive_socket_factory(keepalive)
    sock = make((socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", 0)))
    try:
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
        if hasattr(socket, "TCP_KEEPIDLE"):
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 20
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL) == 5
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT) == 4
        if hasattr(socket, "TCP_USER_TIMEOUT"):
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == 40_000
    finally:
        sock.close()
    with pytest.raises(ValueError, match="keepalive"):
        TcpKeepalive(idle=0)


async def test_transport_connections_have_keepalive(
    serve: Callable[[Handler], Awaitable[str]],
) -> None:
    release = asyncio.Event()

    async def handler(request: web.Request) -> web.StreamResponse:
        response = await streamed(request, b"open")
        await release.wait()  # the connection stays checked out while the test looks at it
        return response

    url = await serve(handler)
    port = int(url.rsplit(":", 1)[1])
    async with (
        opened(Transport(ClientConfig(server=url))) as transport,
        transport.stream("GET", "/") as body,
    ):
        assert await body.readany() == b"open"
        (sock,) = _open_sockets_to(port)
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
        if hasattr(socket, "TCP_KEEPIDLE"):
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 30
        release.set()


def _open_sockets_to(port: int) -> list[socket.socket]:
    found = []
    for obj in gc.get_objects():
        if isinstance(obj, socket.socket) and obj.fileno() != -1:
            try:
                peer, own = obj.getpeername(), obj.getsockname()
            except OSError:
                continue
            if isinstance(peer, tuple) and peer[1] == port and own[1] != port:
                found.append(obj)
    return found


async def read_all(transport: Transport) -> None:
    async with transport.stream("GET", "/watch") as body:
        while await body.readany():
            pass


@pytest.mark.parametrize("how", ["request", "stream"])
async def test_a_cut_tls_answer_leaves_no_socket_open_once_closed(tmp_path: Path, how: str) -> None:
    # The answer's body breaks off (as when a proxy cuts a watch) and the server then neither
    # answers the client's TLS close_notify nor closes: a graceful shutdown of that
    # connection would wait 30 s, past the event loop's end, and leave the socket open (a
    # ResourceWarning whenever it is collected, in whichever test). Closing cuts it.
    pki = generate_pki(tmp_path)
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(pki.serving_cert, pki.serving_key)
    held: list[asyncio.StreamWriter] = []
    hold = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b'Transfer-Encoding: chunked\r\n\r\n6\r\n{"a":1\r\nzz\r\n'
        )
        await writer.drain()
        writer.transport.pause_reading()  # deaf from now on: the close_notify goes unread
        held.append(writer)
        await hold.wait()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=server_tls)
    port = server.sockets[0].getsockname()[1]
    client_tls = ssl.create_default_context(cafile=str(pki.ca_cert))
    transport = Transport(
        ClientConfig(server=f"https://127.0.0.1:{port}", ssl_context=client_tls), max_retries=0
    )
    await transport.open()
    try:
        with pytest.raises(TransportError):
            await (read_all(transport) if how == "stream" else transport.request("GET", "/api"))
    finally:
        await transport.close()
        for _ in range(3):
            await asyncio.sleep(0)  # the aborted transports' connection_lost callbacks
        leaked = _open_sockets_to(port)
        for writer in held:
            writer.transport.abort()
        hold.set()
        server.close()
        await server.wait_closed()
    assert leaked == []
