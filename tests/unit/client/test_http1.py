"""The HTTP/1.1 layer against servers written byte by byte: framing (length, chunks with
extensions and trailers, the connection's end), gzip, keep-alive and its limits, the resend
of an idempotent request on a pooled connection the server had closed, proxies (absolute-form
for http://, a CONNECT tunnel for https://), and garbled answers."""

from __future__ import annotations

import asyncio
import gzip
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from crdkit.client.http1 import (
    ConnectFailed,
    ConnectionBroken,
    Headers,
    Http1Pool,
    HttpError,
    Origin,
    TlsFailed,
)
from crdkit.testing.envtest.certs import generate_pki

Handle = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Server:
    """A loopback server running ``handle`` for each connection; it counts connections and
    keeps every request head it read."""

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.connections = 0
        self.heads: list[bytes] = []
        self.port = 0

    async def read_head(self, reader: asyncio.StreamReader) -> bytes:
        head = await reader.readuntil(b"\r\n\r\n")
        self.heads.append(head)
        return head

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def serving(handle: Handle, tls: ssl.SSLContext | None = None) -> AsyncIterator[Server]:
    server = Server(handle)
    listener = await asyncio.start_server(server._serve, "127.0.0.1", 0, ssl=tls)
    server.port = listener.sockets[0].getsockname()[1]
    try:
        yield server
    finally:
        listener.close()
        await listener.wait_closed()


@asynccontextmanager
async def pool_for(url: str, **options: object) -> AsyncIterator[Http1Pool]:
    pool = Http1Pool(url, **options)  # type: ignore[arg-type]
    try:
        yield pool
    finally:
        await pool.close()


def answer(body: bytes, *headers: str, status: str = "200 OK") -> bytes:
    lines = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


@dataclass(frozen=True)
class Tls:
    """A serving certificate's TLS contexts: the server's, and a client's that trusts it."""

    server: ssl.SSLContext
    client: ssl.SSLContext


@pytest.fixture
def tls(tmp_path: Path) -> Tls:
    pki = generate_pki(tmp_path)
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(pki.serving_cert, pki.serving_key)
    return Tls(server, ssl.create_default_context(cafile=str(pki.ca_cert)))


def test_headers_are_looked_up_in_any_case() -> None:
    headers = Headers()
    dict.__setitem__(headers, "retry-after", "5")
    assert headers["Retry-After"] == "5"
    assert "RETRY-AFTER" in headers
    assert headers.get("Retry-after") == "5"
    assert headers.get("Missing", "x") == "x"
    assert 5 not in headers


def test_origin_keeps_the_servers_path_prefix_and_default_ports() -> None:
    assert Origin.parse("https://k8s.example/clusters/c-1/") == Origin(
        "https", "k8s.example", 443, "/clusters/c-1"
    )
    assert Origin.parse("http://10.0.0.1").authority == "10.0.0.1"
    assert Origin.parse("https://[::1]:6443").authority == "[::1]:6443"
    with pytest.raises(ValueError, match="http"):
        Origin.parse("ftp://host")


def test_only_http_proxies_are_taken() -> None:
    with pytest.raises(ValueError, match="proxy 'socks5://p:1080': only http://"):
        Http1Pool("https://k8s.example", proxy="socks5://p:1080")


async def test_a_connection_idle_past_the_timeout_is_closed_not_reused() -> None:
    # A burst opens many connections; kept for good, they held sockets open long after (the
    # soak saw the scheduler's sockets swing 23-44). Idle past the timeout, they are closed.
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await server.read_head(reader)
            await gate.wait()
            writer.write(answer(b"ok"))

    now = [0.0]
    gate = asyncio.Event()
    async with (
        serving(handle) as server,
        pool_for(f"http://127.0.0.1:{server.port}", idle_timeout=90, clock=lambda: now[0]) as pool,
    ):
        burst = [asyncio.create_task(pool.request("GET", f"/{i}")) for i in range(3)]
        await asyncio.sleep(0)
        gate.set()
        await asyncio.gather(*burst)
        assert (server.connections, pool.idle) == (3, 3)
        now[0] = 60.0
        await pool.request("GET", "/within")  # reuses one: none idle 90 s yet
        assert (server.connections, pool.idle) == (3, 3)
        now[0] = 120.0  # two idle since 0, one since 60
        await pool.request("GET", "/after")
        assert server.connections == 3  # the one idle since 60 is reused
        assert pool.idle == 1


async def test_a_kept_alive_connection_carries_the_next_request() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await server.read_head(reader)
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            body = await reader.readexactly(length)
            writer.write(answer(b"echo:" + body))

    async with serving(handle) as server, pool_for(f"http://127.0.0.1:{server.port}/pre") as pool:
        first = await pool.request("POST", "/a", body=b"one", params={"x": "a b"})
        second = await pool.request("PUT", "/b", body=b"two")
    assert (first.status, first.body, second.body) == (200, b"echo:one", b"echo:two")
    assert server.connections == 1
    assert server.heads[0].startswith(b"POST /pre/a?x=a+b HTTP/1.1\r\n")
    assert b"\r\nHost: 127.0.0.1:" in server.heads[0]


async def test_chunks_with_extensions_and_trailers_make_one_body() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await server.read_head(reader)
            writer.write(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"5;name=value\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: 1\r\n\r\n"
            )

    async with serving(handle) as server, pool_for(f"http://127.0.0.1:{server.port}") as pool:
        assert (await pool.request("GET", "/")).body == b"hello world"
        assert (await pool.request("GET", "/")).body == b"hello world"
    assert server.connections == 1  # the trailers were read: the connection stayed usable


async def test_a_body_that_ends_with_the_connection_and_connection_close() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await server.read_head(reader)
        if b"/eof" in head:
            writer.write(b"HTTP/1.1 200 OK\r\n\r\nall of it")
        else:
            writer.write(answer(b"{}", "Connection: close"))
        await writer.drain()

    async with serving(handle) as server, pool_for(f"http://127.0.0.1:{server.port}") as pool:
        assert (await pool.request("GET", "/eof")).body == b"all of it"
        assert (await pool.request("GET", "/close")).body == b"{}"
        assert (await pool.request("GET", "/close")).body == b"{}"
    assert server.connections == 3


@asynccontextmanager
async def serving_gzip_watch(chunks: bytes, other: bytes) -> AsyncIterator[Server]:
    """A server answering ``/watch`` with a gzip-encoded chunked stream made of ``chunks``
    (already chunk-encoded) and any other request with the whole answer ``other``."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await server.read_head(reader)
            if b"/watch" in head:
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n" + chunks
                )
            else:
                writer.write(other)

    async with serving(handle) as server:
        yield server


async def test_gzip_answers_are_decompressed_whole_and_streamed() -> None:
    text = b'{"type":"ADDED"}\n' * 200
    packed = gzip.compress(text)
    pieces = [packed[start : start + 50] for start in range(0, len(packed), 50)]
    chunks = b"".join(f"{len(piece):x}\r\n".encode() + piece + b"\r\n" for piece in pieces)

    async with (
        serving_gzip_watch(
            chunks + b"0\r\n\r\n", answer(packed, "Content-Encoding: gzip")
        ) as server,
        pool_for(f"http://127.0.0.1:{server.port}") as pool,
    ):
        assert (await pool.request("GET", "/list")).body == text
        head, body = await pool.stream("GET", "/watch", idle_timeout=5)
        assert head.status == 200
        assert await body.read() == text


async def test_an_unknown_content_encoding_is_refused() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_head(reader)
        writer.write(answer(b"xx", "Content-Encoding: br"))
        await writer.drain()
        await reader.read()

    async with serving(handle) as server, pool_for(f"http://127.0.0.1:{server.port}") as pool:
        with pytest.raises(ConnectionBroken, match="'br'"):
            await pool.request("GET", "/")


@pytest.mark.parametrize(("method", "resent"), [("GET", True), ("DELETE", True), ("POST", False)])
async def test_a_pooled_connection_closed_under_a_request(method: str, resent: bool) -> None:
    # The server keeps the connection after the first answer, then reads the second request
    # and closes without a word: the close of an idle connection crossing the next request.
    # Only a request that may be sent twice is sent again, on a fresh connection.
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_head(reader)
        writer.write(answer(b"first" if server.connections == 1 else b"fresh"))
        await writer.drain()
        if server.connections == 1:
            await server.read_head(reader)

    async with serving(handle) as server, pool_for(f"http://127.0.0.1:{server.port}") as pool:
        assert (await pool.request("GET", "/")).body == b"first"
        if resent:
            assert (await pool.request(method, "/")).body == b"fresh"
            assert server.connections == 2
        else:
            with pytest.raises(ConnectionBroken):
                await pool.request(method, "/", body=b"{}")
            assert server.connections == 1


async def test_a_fresh_connection_that_breaks_is_not_resent() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_head(reader)

    async with serving(handle) as server, pool_for(f"http://127.0.0.1:{server.port}") as pool:
        with pytest.raises(ConnectionBroken):
            await pool.request("GET", "/")
    assert server.connections == 1


@pytest.mark.parametrize(
    "garbage",
    [
        b"SSH-2.0-OpenSSH\r\n\r\n",
        b"HTTP/1.1 abc OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: many\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd",
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
    ],
)
async def test_a_garbled_answer_is_a_broken_connection(garbage: bytes) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_head(reader)
        writer.write(garbage)
        await writer.drain()

    async with serving(handle) as server, pool_for(f"http://127.0.0.1:{server.port}") as pool:
        with pytest.raises(ConnectionBroken):
            await pool.request("GET", "/")


async def test_the_limit_holds_requests_until_a_connection_is_free() -> None:
    order: list[str] = []
    release = asyncio.Event()
    arrived = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await server.read_head(reader)
            order.append(head.split(b" ")[1].decode())
            if b"/slow" in head:
                arrived.set()
                await release.wait()
            writer.write(answer(b"ok"))

    async with (
        serving(handle) as server,
        pool_for(f"http://127.0.0.1:{server.port}", limit=1) as pool,
    ):
        slow = asyncio.create_task(pool.request("GET", "/slow"))
        fast = asyncio.create_task(pool.request("GET", "/fast"))
        await arrived.wait()
        for _ in range(20):
            await asyncio.sleep(0)
        assert order == ["/slow"]  # the second waits for the only connection
        release.set()
        await asyncio.gather(slow, fast)
    assert order == ["/slow", "/fast"]
    assert server.connections == 1


async def test_a_silent_server_times_out_the_read() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_head(reader)
        await reader.read()

    async with serving(handle) as server, pool_for(f"http://127.0.0.1:{server.port}") as pool:
        with pytest.raises(TimeoutError):
            await pool.request("GET", "/", read_timeout=0.05)


async def test_an_http_server_through_a_proxy_is_asked_in_absolute_form() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_head(reader)
        writer.write(answer(b"via proxy"))
        await writer.drain()
        await reader.read()

    async with (
        serving(handle) as server,
        pool_for(
            "http://k8s.internal:8080/base", proxy=f"http://u%40x:p@127.0.0.1:{server.port}"
        ) as pool,
    ):
        assert (await pool.request("GET", "/api")).body == b"via proxy"
    head = server.heads[0]
    assert head.startswith(b"GET http://k8s.internal:8080/base/api HTTP/1.1\r\n")
    assert b"\r\nHost: k8s.internal:8080\r\n" in head
    assert b"\r\nProxy-Authorization: Basic dUB4OnA=\r\n" in head  # u@x:p


async def test_an_https_server_through_a_connect_tunnel(tls: Tls) -> None:

    async def origin(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await apiserver.read_head(reader)
        writer.write(answer(b"tunnelled"))
        await writer.drain()
        await reader.read()

    async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
        sink.close()

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await tunnel.read_head(reader)
        if b"Proxy-Authorization" not in head:
            writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            return
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", apiserver.port)
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async with serving(origin, tls=tls.server) as apiserver, serving(proxy) as tunnel:
        url = f"https://127.0.0.1:{apiserver.port}"
        async with pool_for(
            url, ssl_context=tls.client, proxy=f"http://user:pw@127.0.0.1:{tunnel.port}"
        ) as pool:
            assert (await pool.request("GET", "/version")).body == b"tunnelled"
        async with pool_for(
            url, ssl_context=tls.client, proxy=f"http://127.0.0.1:{tunnel.port}"
        ) as pool:
            with pytest.raises(ConnectFailed, match="407 Proxy Authentication Required"):
                await pool.request("GET", "/version")
    assert tunnel.heads[0].startswith(f"CONNECT 127.0.0.1:{apiserver.port} HTTP/1.1\r\n".encode())
    assert apiserver.heads[0].startswith(b"GET /version HTTP/1.1\r\n")


async def test_a_certificate_the_client_does_not_trust_is_a_tls_failure(tls: Tls) -> None:

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()

    async with (
        serving(handle, tls=tls.server) as server,
        pool_for(
            f"https://127.0.0.1:{server.port}", ssl_context=ssl.create_default_context()
        ) as pool,
    ):
        with pytest.raises(TlsFailed, match="certificate"):
            await pool.request("GET", "/")


async def test_large_bodies_cross_tls_both_ways(tls: Tls) -> None:
    # Megabytes each way: the socket's send buffer fills (the writer waits in drain) and the
    # reader's buffer fills (the socket is paused), and every record is decrypted in order.
    sent = bytes(range(256)) * (6 * 4096)  # 6 MiB

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await server.read_head(reader)
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        received = await reader.readexactly(length)
        writer.write(answer(received[::-1]))
        await writer.drain()
        await reader.read()

    async with (
        serving(handle, tls=tls.server) as server,
        pool_for(f"https://127.0.0.1:{server.port}", ssl_context=tls.client) as pool,
    ):
        assert (await pool.request("POST", "/", body=sent)).body == sent[::-1]


async def test_a_tls_close_notify_ends_a_streamed_body(tls: Tls) -> None:

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\n\r\n{}\n")  # no length: the body ends with the TLS
        await writer.drain()
        writer.close()  # a close_notify, then the TCP close
        await writer.wait_closed()

    async with (
        serving(handle, tls=tls.server) as server,
        pool_for(f"https://127.0.0.1:{server.port}", ssl_context=tls.client) as pool,
    ):
        head, body = await pool.stream("GET", "/watch", idle_timeout=5)
        assert head.status == 200
        assert await body.read() == b"{}\n"


@pytest.mark.parametrize("secure", [False, True])
def test_the_pool_runs_on_uvloop(tls: Tls, secure: bool) -> None:
    uvloop = pytest.importorskip("uvloop")

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await server.read_head(reader)
            writer.write(answer(b"on uvloop"))

    async def main() -> tuple[bytes, bytes]:
        async with serving(handle, tls=tls.server if secure else None) as running:
            nonlocal server
            server = running
            scheme = "https" if secure else "http"
            async with pool_for(
                f"{scheme}://127.0.0.1:{running.port}", ssl_context=tls.client
            ) as pool:
                first = await pool.request("GET", "/")
                second = await pool.request("GET", "/")
                return first.body, second.body

    server: Server
    assert uvloop.run(main()) == (b"on uvloop", b"on uvloop")


async def test_a_closed_pool_refuses_requests_for_good() -> None:
    pool = Http1Pool("http://127.0.0.1:9")
    await pool.close()
    with pytest.raises(HttpError, match="closed") as raised:
        await pool.request("GET", "/")
    assert not isinstance(raised.value, ConnectFailed | ConnectionBroken)  # nothing to retry


async def test_a_garbled_gzip_stream_gives_its_connection_back() -> None:
    async with (
        serving_gzip_watch(b"9\r\nnot gzip!\r\n", answer(b"ok")) as server,
        pool_for(f"http://127.0.0.1:{server.port}", limit=1) as pool,
    ):
        _, body = await pool.stream("GET", "/watch", idle_timeout=5)
        with pytest.raises(ConnectionBroken, match="decompress"):
            await body.readany()
        # The only slot is free again: the next request gets a connection.
        assert (await pool.request("GET", "/")).body == b"ok"
