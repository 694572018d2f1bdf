"""The fault proxies against local upstreams (an echo server, a small HTTPS app): every mode,
switched while connections are open. Times are only ever lower bounds."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import socket
import ssl
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from aiohttp import web

from crdkit.testing import FaultMode, HttpFaultProxy, TcpFaultProxy
from crdkit.testing.envtest.certs import generate_pki

QUIET = 0.3  # how long "nothing arrives" is watched for; only ever a lower bound


class Echo:
    """An upstream that echoes every byte and counts the connections it accepted."""

    def __init__(self) -> None:
        self.accepted = 0
        self.server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()


@pytest.fixture
async def echo() -> AsyncIterator[Echo]:
    server = Echo()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def proxy(echo: Echo) -> AsyncIterator[TcpFaultProxy]:
    async with TcpFaultProxy(("127.0.0.1", echo.port)) as running:
        yield running


async def connect(proxy: TcpFaultProxy) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(proxy.host, proxy.port)


def close_all(*writers: asyncio.StreamWriter) -> None:
    """The client's end of each connection a test made, closed once the test is done."""
    for writer in writers:
        writer.close()


async def round_trip(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, data: bytes
) -> bytes:
    writer.write(data)
    await writer.drain()
    return await asyncio.wait_for(reader.readexactly(len(data)), 10)


async def silent(reader: asyncio.StreamReader) -> bool:
    """Nothing (no byte, no EOF) arrives for a while."""
    try:
        await asyncio.wait_for(reader.read(1), QUIET)
    except TimeoutError:
        return True
    return False


async def eventually(check: object, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def test_pass_forwards_both_ways(proxy: TcpFaultProxy, echo: Echo) -> None:
    assert proxy.mode is FaultMode.PASS
    reader, writer = await connect(proxy)
    assert await round_trip(reader, writer, b"hello") == b"hello"
    assert proxy.accepted == 1
    assert echo.accepted == 1
    writer.close()


async def test_hold_forwards_nothing_then_heals(proxy: TcpFaultProxy) -> None:
    reader, writer = await connect(proxy)
    assert await round_trip(reader, writer, b"before") == b"before"
    proxy.hold()
    writer.write(b"during")
    await writer.drain()
    assert await silent(reader)
    proxy.pass_through()
    # Held, not lost: a partition that healed delivers what was sent into it.
    assert await asyncio.wait_for(reader.readexactly(6), 10) == b"during"
    writer.close()


async def test_a_connection_made_during_a_hold_reaches_nobody_until_it_ends(
    proxy: TcpFaultProxy, echo: Echo
) -> None:
    proxy.hold()
    reader, writer = await connect(proxy)  # accepted: a blackhole, not a refusal
    writer.write(b"hi")
    await writer.drain()
    assert await silent(reader)
    assert echo.accepted == 0  # the server never heard of it
    proxy.pass_through()
    assert await asyncio.wait_for(reader.readexactly(2), 10) == b"hi"
    assert echo.accepted == 1
    writer.close()


async def test_hold_without_resume_leaves_old_connections_dead(
    proxy: TcpFaultProxy, echo: Echo
) -> None:
    old_reader, old_writer = await connect(proxy)
    assert await round_trip(old_reader, old_writer, b"x") == b"x"
    proxy.hold(resume=False)
    old_writer.write(b"lost")
    await old_writer.drain()
    proxy.pass_through()
    assert await silent(old_reader)  # healed, but this connection is forgotten
    new_reader, new_writer = await connect(proxy)
    assert await round_trip(new_reader, new_writer, b"fresh") == b"fresh"
    assert proxy.open_connections == 2
    old_writer.close()  # the client giving up ends the dead connection
    await eventually(lambda: proxy.open_connections == 1)
    new_writer.close()


async def test_freeze_connections_spares_new_ones(proxy: TcpFaultProxy) -> None:
    old_reader, old_writer = await connect(proxy)
    assert await round_trip(old_reader, old_writer, b"x") == b"x"
    assert proxy.freeze_connections() == 1
    assert proxy.mode is FaultMode.PASS
    old_writer.write(b"y")
    await old_writer.drain()
    assert await silent(old_reader)
    new_reader, new_writer = await connect(proxy)
    assert await round_trip(new_reader, new_writer, b"z") == b"z"
    close_all(old_writer, new_writer)


async def test_drop_closes_existing_and_new_connections(proxy: TcpFaultProxy) -> None:
    reader, writer = await connect(proxy)
    assert await round_trip(reader, writer, b"x") == b"x"
    proxy.drop()
    assert await asyncio.wait_for(reader.read(), 10) == b""  # a FIN
    reader2, writer2 = await connect(proxy)
    assert await asyncio.wait_for(reader2.read(), 10) == b""
    proxy.pass_through()
    reader3, writer3 = await connect(proxy)
    assert await round_trip(reader3, writer3, b"back") == b"back"
    close_all(writer, writer2, writer3)


async def test_reset_sends_rst_to_existing_and_new_connections(proxy: TcpFaultProxy) -> None:
    reader, writer = await connect(proxy)
    assert await round_trip(reader, writer, b"x") == b"x"
    proxy.reset()
    with pytest.raises(ConnectionResetError):
        await asyncio.wait_for(reader.read(), 10)

    async def connect_and_read() -> bytes:
        # On loopback the RST can beat the end of the connect call itself.
        reader2, _ = await connect(proxy)
        return await asyncio.wait_for(reader2.read(), 10)

    with pytest.raises(ConnectionResetError):
        await connect_and_read()
    writer.close()


async def test_refuse_stops_listening_on_the_same_port(proxy: TcpFaultProxy) -> None:
    reader, writer = await connect(proxy)
    # Accepted by the proxy, not just queued in the kernel's backlog (closing a listening
    # socket drops what is queued there).
    assert await round_trip(reader, writer, b"in") == b"in"
    port = proxy.port
    proxy.refuse()
    with pytest.raises(ConnectionRefusedError):
        await connect(proxy)
    # Existing connections are left alone.
    assert await round_trip(reader, writer, b"still") == b"still"
    proxy.pass_through()
    assert proxy.port == port
    reader2, writer2 = await connect(proxy)
    assert await round_trip(reader2, writer2, b"again") == b"again"
    close_all(writer, writer2)


async def test_latency_delays_each_direction(proxy: TcpFaultProxy) -> None:
    reader, writer = await connect(proxy)
    proxy.latency(0.2)
    started = time.monotonic()
    assert await round_trip(reader, writer, b"slow") == b"slow"
    assert time.monotonic() - started >= 0.4  # there and back
    proxy.pass_through()
    writer.close()
    with pytest.raises(ValueError, match="latency"):
        proxy.latency(-1)


async def test_an_upstream_reset_reaches_the_client_as_a_reset() -> None:
    async def rst_at_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        import socket
        import struct

        await reader.read(1)
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()

    server = await asyncio.start_server(rst_at_once, "127.0.0.1", 0)
    try:
        async with TcpFaultProxy(("127.0.0.1", server.sockets[0].getsockname()[1])) as proxy:
            reader, writer = await connect(proxy)
            writer.write(b"!")
            await writer.drain()
            with pytest.raises(ConnectionResetError):
                await asyncio.wait_for(reader.read(), 10)
    finally:
        server.close()


def test_a_stopped_proxy_says_so(echo: Echo) -> None:
    proxy = TcpFaultProxy(f"http://127.0.0.1:{echo.port}")
    with pytest.raises(RuntimeError, match="not started"):
        proxy.hold()
    with proxy:
        assert proxy.port > 0
    with pytest.raises(RuntimeError, match="not started"):
        _ = proxy.port
    proxy.stop()  # twice is fine
    with pytest.raises(RuntimeError, match="for_control_plane"):
        proxy.client_config()


# -- the HTTP proxy ----------------------------------------------------------------------------


class Upstream:
    """A small HTTPS app standing in for the apiserver: echoes requests, streams a watch."""

    def __init__(self, tmp: Path) -> None:
        self.pki = generate_pki(tmp / "upstream")
        self.release = asyncio.Event()
        self.runner: web.AppRunner | None = None
        self.url = ""
        self.seen: list[tuple[str, str, bytes, dict[str, str]]] = []

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self.runner = web.AppRunner(app, shutdown_timeout=0.2)
        await self.runner.setup()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(self.pki.serving_cert), str(self.pki.serving_key))
        site = web.TCPSite(self.runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        self.url = f"https://127.0.0.1:{self.runner.addresses[0][1]}"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.seen.append((request.method, request.path_qs, body, dict(request.headers)))
        if request.query.get("watch") == "true":
            response = web.StreamResponse()
            await response.prepare(request)
            await response.write(b'{"type":"BOOKMARK"}\n')
            await self.release.wait()
            return response
        return web.json_response({"method": request.method, "body": body.decode()}, status=201)

    def client_ssl(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.pki.ca_cert))

    async def stop(self) -> None:
        self.release.set()
        if self.runner is not None:
            await self.runner.cleanup()


@pytest.fixture
async def upstream(tmp_path: Path) -> AsyncIterator[Upstream]:
    app = Upstream(tmp_path)
    await app.start()
    yield app
    await app.stop()


@pytest.fixture
async def http_proxy(upstream: Upstream) -> AsyncIterator[HttpFaultProxy]:
    async with HttpFaultProxy(upstream.url, upstream_ssl=upstream.client_ssl()) as running:
        yield running


@pytest.fixture
async def session(http_proxy: HttpFaultProxy) -> AsyncIterator[aiohttp.ClientSession]:
    context = ssl.create_default_context(cafile=str(http_proxy.ca_file))
    sockets: list[socket.socket] = []

    def new_socket(addr_info: tuple[Any, ...]) -> socket.socket:
        sockets.append(socket.socket(addr_info[0], addr_info[1], addr_info[2]))
        return sockets[-1]

    connector = aiohttp.TCPConnector(ssl=context, socket_factory=new_socket)
    async with aiohttp.ClientSession(connector=connector) as client:
        yield client
    # A watch left mid-stream is in a graceful TLS shutdown that waits for the proxy's
    # close_notify; on a loaded machine that outlives the test. The test is done: cut it.
    for sock in sockets:
        if sock.fileno() != -1:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
    for _ in range(4):
        await asyncio.sleep(0)


async def test_http_proxy_terminates_tls_forwards_and_records(
    http_proxy: HttpFaultProxy, upstream: Upstream, session: aiohttp.ClientSession
) -> None:
    async with session.post(
        f"{http_proxy.url}/api/v1/things?x=1",
        data=b'{"a":1}',
        headers={"Authorization": "Bearer t", "Content-Type": "application/json"},
    ) as response:
        assert response.status == 201
        assert await response.json() == {"method": "POST", "body": '{"a":1}'}
    method, path, body, headers = upstream.seen[0]
    assert (method, path, body) == ("POST", "/api/v1/things?x=1", b'{"a":1}')
    assert headers["Authorization"] == "Bearer t"
    [recorded] = http_proxy.requests()
    assert (recorded.method, recorded.path, recorded.query) == (
        "POST",
        "/api/v1/things",
        {"x": "1"},
    )
    assert recorded.status == 201
    assert not recorded.watch
    assert not recorded.injected
    assert recorded.answered_at is not None
    assert recorded.answered_at >= recorded.received_at


async def test_http_proxy_answers_matching_watches_with_retry_after(
    http_proxy: HttpFaultProxy, upstream: Upstream, session: aiohttp.ClientSession
) -> None:
    fault = http_proxy.fail(429, retry_after=5, watch=True, times=1)
    async with session.get(f"{http_proxy.url}/api/v1/pods") as response:
        assert response.status == 201  # not a watch: untouched
    async with session.get(f"{http_proxy.url}/api/v1/pods?watch=true") as response:
        assert response.status == 429
        assert response.headers["Retry-After"] == "5"
        status = json.loads(await response.read())
        assert status["kind"] == "Status"
        assert status["reason"] == "TooManyRequests"
        assert status["details"]["retryAfterSeconds"] == 5
    async with session.get(f"{http_proxy.url}/api/v1/pods?watch=true") as response:
        assert response.status == 200  # used up: the apiserver answers again
        assert await response.content.readline() == b'{"type":"BOOKMARK"}\n'
    assert fault.hits == 1
    assert not fault.active
    watches = http_proxy.requests(watch=True)
    assert [(r.status, r.injected) for r in watches] == [(429, True), (200, False)]
    assert len(upstream.seen) == 2  # the injected answer never reached the upstream


async def test_http_proxy_storms_are_repeatable_and_removable(
    http_proxy: HttpFaultProxy, session: aiohttp.ClientSession
) -> None:
    async def statuses() -> list[int]:
        out = []
        for _ in range(20):
            async with session.post(f"{http_proxy.url}/w", data=b"{}") as response:
                out.append(response.status)
        return out

    first = http_proxy.fail(503, methods=["post"], probability=0.5, seed=7)
    one = await statuses()
    http_proxy.remove_fault(first)
    http_proxy.fail(503, methods=["POST"], probability=0.5, seed=7)
    two = await statuses()
    assert one == two
    assert 0 < one.count(503) < 20
    http_proxy.clear_faults()
    assert set(await statuses()) == {201}
    with pytest.raises(ValueError, match="times"):
        http_proxy.fail(503, times=0)
    with pytest.raises(ValueError, match="probability"):
        http_proxy.fail(503, probability=0)


async def test_http_proxy_resets_matching_requests(
    http_proxy: HttpFaultProxy, upstream: Upstream, session: aiohttp.ClientSession
) -> None:
    http_proxy.reset_requests(methods=["POST"], times=1)
    with pytest.raises(aiohttp.ClientError):
        async with session.post(f"{http_proxy.url}/w", data=b"{}") as response:
            await response.read()
    assert upstream.seen == []
    [recorded] = http_proxy.requests()
    assert recorded.injected
    assert recorded.status is None
    async with session.post(f"{http_proxy.url}/w", data=b"{}") as response:
        assert response.status == 201


async def test_http_proxy_cuts_watches_in_flight(
    http_proxy: HttpFaultProxy, session: aiohttp.ClientSession
) -> None:
    async with session.get(f"{http_proxy.url}/api/v1/pods?watch=true") as response:
        assert await response.content.readline() == b'{"type":"BOOKMARK"}\n'
        assert http_proxy.open_watches == 1
        assert http_proxy.cut_watches() == 1
        with pytest.raises(aiohttp.ClientPayloadError):
            await asyncio.wait_for(response.content.read(), 10)
    assert http_proxy.open_watches == 0


async def test_http_proxy_connection_faults_act_below_tls(
    http_proxy: HttpFaultProxy, session: aiohttp.ClientSession
) -> None:
    http_proxy.hold()
    request = asyncio.ensure_future(session.get(f"{http_proxy.url}/x"))
    await asyncio.sleep(QUIET)
    assert not request.done()  # even the TLS handshake waits
    assert http_proxy.requests() == []
    http_proxy.pass_through()
    response = await asyncio.wait_for(request, 10)
    assert response.status == 201
    response.release()
    http_proxy.refuse()
    context = ssl.create_default_context(cafile=str(http_proxy.ca_file))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context)) as fresh:
        with pytest.raises(aiohttp.ClientConnectorError):
            await fresh.get(f"{http_proxy.url}/x")


def test_http_proxy_writes_a_kubeconfig_trusting_its_ca(tmp_path: Path) -> None:
    with HttpFaultProxy("https://127.0.0.1:1") as proxy:
        written = proxy.write_kubeconfig(tmp_path / "kubeconfig")
        config = yaml.safe_load(written.read_text())
        cluster = config["clusters"][0]["cluster"]
        assert cluster["server"] == proxy.url
        assert base64.b64decode(cluster["certificate-authority-data"]) == proxy.ca_file.read_bytes()
        assert proxy.client_config().server == proxy.url
