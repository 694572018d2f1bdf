"""HTTP/1.1 to one apiserver, on asyncio's streams: connections, a pool, framing, nothing else.

:class:`~crdkit.client.transport.Transport` sends every request through :class:`Http1Pool`.
An apiserver client needs little of a general HTTP client: one origin, JSON bodies with a
``Content-Length``, answers framed by ``Content-Length`` or chunked (a watch), gzip when asked
for, and an ``http://`` proxy at most. Speaking just that costs a few function calls a
request, where a general client builds URL objects, header multidicts and trace hooks for every
one, and loads about 12 MB of modules (and two TLS contexts) before the first; the operator's
start-up and its CPU per reconcile are where that shows.

What fails is said by the exception's class, which is what the retry rules need to know:

- :class:`ConnectFailed`: no connection was made, so nothing was sent (refused, no route, no
  such name, a proxy that refused the tunnel);
- :class:`TlsFailed`: the TLS handshake failed (a certificate, a protocol): a retry changes
  nothing;
- :class:`ConnectionBroken`: the connection broke once the request was on its way, so the
  server may have acted on it.

A timeout is Python's ``TimeoutError``. A connection is never shut down gracefully: one that
is not handed back to the pool whole is aborted, so a peer that ignores TLS's close_notify
cannot hold a socket open past the transport's end.
"""

from __future__ import annotations

import asyncio
import base64
import socket
import ssl
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlencode, urlsplit

from crdkit.client.errors import TransportError
from crdkit.client.tls_stream import StreamConnection

__all__ = [
    "ConnectFailed",
    "ConnectionBroken",
    "Headers",
    "Http1Pool",
    "HttpError",
    "Origin",
    "Params",
    "Response",
    "StreamBody",
    "TlsFailed",
]

AddrInfo = tuple[Any, ...]
SocketFactory = Callable[[AddrInfo], socket.socket]
Params = Mapping[str, str] | Sequence[tuple[str, str]]
"""A request's query: a mapping, or pairs (a name may repeat)."""

_BUFFER_LIMIT = 1 << 18
"""The stream reader's buffer (and the longest header block or chunk-size line): a list page
of a few MB arrives in reads of this size with the socket paused in between."""
_PIECE = 1 << 20
"""A ``Content-Length`` body is read in pieces of this size, each within the read timeout."""
_IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
_NO_BODY_STATUS = frozenset({204, 304})
_BROKEN = (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError)
"""What a broken or garbled connection raises (``ssl.SSLError`` and ``ConnectionError`` are
``OSError``s; a ``TimeoutError`` is one too, and is caught before these)."""


class HttpError(TransportError):
    """A request that got no HTTP answer (or an answer that broke off)."""


class ConnectFailed(HttpError):
    """No connection could be made: nothing was sent. ``os_error`` says why."""

    def __init__(self, message: str, os_error: OSError | None = None) -> None:
        super().__init__(message)
        self.os_error = os_error


class TlsFailed(ConnectFailed):
    """The TLS handshake failed: the certificate or the protocol, which a retry cannot fix."""


class ConnectionBroken(HttpError):
    """The connection broke after the request was (perhaps) sent, or the answer was garbled."""


class Headers(dict[str, str]):
    """An answer's headers by lower-case name; looked up in any case, as HTTP's names are."""

    def __getitem__(self, name: str) -> str:
        return super().__getitem__(name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and super().__contains__(name.lower())

    def get(self, name: str, default: Any = None) -> Any:
        return super().get(name.lower(), default)


@dataclass(frozen=True)
class Origin:
    """Where requests go: ``scheme://host:port`` and the server URL's own path prefix."""

    scheme: str
    host: str
    port: int
    prefix: str

    @classmethod
    def parse(cls, url: str) -> Origin:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL with a host: {url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))

    @property
    def authority(self) -> str:
        """``host:port`` as the Host header and a CONNECT request write it."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


@dataclass(frozen=True)
class _Proxy:
    origin: Origin
    authorization: str | None

    @classmethod
    def parse(cls, url: str) -> _Proxy:
        parts = urlsplit(url)
        if parts.scheme != "http":
            raise ValueError(
                f"proxy {url!r}: only http:// proxies are supported (a CONNECT tunnel for "
                "https:// servers)"
            )
        authorization = None
        if parts.username is not None:
            user_pass = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            authorization = "Basic " + base64.b64encode(user_pass.encode()).decode()
        return cls(Origin.parse(url), authorization)


class _Connection:
    """One connection: what it reads into, its protocol, and whether it served a request."""

    __slots__ = ("idle_since", "protocol", "reader", "reused")

    def __init__(self, reader: asyncio.StreamReader, protocol: StreamConnection) -> None:
        self.reader = reader
        self.protocol = protocol
        self.reused = False
        self.idle_since = 0.0

    def usable(self) -> bool:
        """Whether an idle connection can carry another request: the server has not closed
        it (a close that is still on its way is caught by the resend in ``_send``)."""
        return not self.protocol.is_closing() and not self.reader.at_eof()

    def abort(self) -> None:
        self.protocol.abort()


@dataclass
class Response:
    """An answer's status, headers and, for a request, its whole body."""

    status: int
    headers: Headers
    body: bytes = b""


class _Decoder:
    """Undoes the answer's ``Content-Encoding`` (gzip or deflate), piece by piece."""

    def __init__(self, encoding: str) -> None:
        wbits = 31 if encoding in ("gzip", "x-gzip") else 15
        self._inflate = zlib.decompressobj(wbits)

    def feed(self, data: bytes) -> bytes:
        try:
            return self._inflate.decompress(data)
        except zlib.error as error:
            raise ConnectionBroken(f"cannot decompress the answer: {error}") from error

    def flush(self) -> bytes:
        return self._inflate.flush()


def _decoder_for(headers: Headers) -> _Decoder | None:
    encoding = headers.get("content-encoding", "").strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip", "deflate"):
        return _Decoder(encoding)
    raise ConnectionBroken(f"the answer's Content-Encoding {encoding!r} is not gzip or deflate")


def _parse_head(block: bytes) -> tuple[int, Headers]:
    lines = block.split(b"\r\n")
    status_line = lines[0].split(None, 2)
    if len(status_line) < 2 or not status_line[0].startswith(b"HTTP/1."):
        raise ConnectionBroken(f"not an HTTP/1.x answer: {lines[0][:80]!r}")
    try:
        status = int(status_line[1])
    except ValueError:
        raise ConnectionBroken(f"not an HTTP status: {lines[0][:80]!r}") from None
    headers = Headers()
    for line in lines[1:]:
        if not line:
            continue
        name, colon, value = line.partition(b":")
        if not colon:
            raise ConnectionBroken(f"not an HTTP header: {line[:80]!r}")
        key = name.strip().decode("latin-1").lower()
        text = value.strip().decode("latin-1")
        previous = dict.get(headers, key)
        dict.__setitem__(headers, key, text if previous is None else f"{previous}, {text}")
    return status, headers


class _Framing:
    """How an answer's body ends: ``length`` bytes, chunks, or the connection's end."""

    __slots__ = ("chunked", "keep_alive", "remaining")

    def __init__(self, method: str, status: int, headers: Headers) -> None:
        self.keep_alive = "close" not in headers.get("connection", "").lower()
        self.chunked = False
        self.remaining: int | None = None
        if method == "HEAD" or status in _NO_BODY_STATUS or status < 200:
            self.remaining = 0
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self.chunked = True
        elif "content-length" in headers:
            try:
                self.remaining = int(headers["content-length"])
            except ValueError:
                raise ConnectionBroken("the answer's Content-Length is not a number") from None
        else:
            self.keep_alive = False  # the body ends with the connection

    async def read(self, reader: asyncio.StreamReader) -> bytes:
        """The body's next bytes (``b""`` at its end), as they come."""
        if self.chunked:
            line = await reader.readuntil(b"\r\n")
            try:
                size = int(line.split(b";", 1)[0], 16)
            except ValueError:
                raise ConnectionBroken(f"not a chunk size: {line[:40]!r}") from None
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":
                    pass  # trailers: none that matter here
                self.chunked = False
                self.remaining = 0
                return b""
            data = await reader.readexactly(size + 2)
            if not data.endswith(b"\r\n"):
                raise ConnectionBroken("a chunk did not end with CRLF")
            return data[:-2]
        if self.remaining is None:
            return await reader.read(_PIECE)
        if self.remaining == 0:
            return b""
        data = await reader.readexactly(min(self.remaining, _PIECE))
        self.remaining -= len(data)
        return data

    @property
    def done(self) -> bool:
        return self.remaining == 0


class StreamBody:
    """A streamed answer's body (a watch): :meth:`readany` gives its next bytes, each wait
    bounded by the idle timeout; :meth:`close` hands the connection back or aborts it."""

    def __init__(
        self,
        pool: Http1Pool,
        connection: _Connection,
        framing: _Framing,
        decoder: _Decoder | None,
        idle_timeout: float | None,
    ) -> None:
        self._pool = pool
        self._connection: _Connection | None = connection
        self._framing = framing
        self._decoder = decoder
        self._idle = idle_timeout
        self._ended = False

    async def readany(self) -> bytes:
        """The next bytes of the body; ``b""`` once it ended. ``TimeoutError`` after a silence
        longer than the idle timeout, :class:`ConnectionBroken` if the connection broke."""
        while True:
            if self._ended or self._connection is None:
                return b""
            try:
                async with asyncio.timeout(self._idle):
                    data = await self._framing.read(self._connection.reader)
            except TimeoutError:
                self.close()
                raise
            except _BROKEN as error:
                self.close()
                raise ConnectionBroken(f"the answer broke off: {_describe(error)}") from error
            if not data:
                self._ended = True
                tail = self._decoder.flush() if self._decoder is not None else b""
                self.close()
                return tail
            if self._decoder is not None:
                try:
                    data = self._decoder.feed(data)
                except ConnectionBroken:
                    self.close()
                    raise
                if not data:
                    continue
            return data

    async def read(self) -> bytes:
        """The rest of the body (an error answer's, which is short)."""
        parts = []
        while chunk := await self.readany():
            parts.append(chunk)
        return b"".join(parts)

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            self._pool.release(connection, reusable=self._framing.done and self._framing.keep_alive)


def _describe(error: BaseException) -> str:
    if isinstance(error, asyncio.IncompleteReadError):
        if error.expected is None:
            return "the connection ended early"
        return f"the connection ended {error.expected - len(error.partial)} bytes early"
    return str(error) or type(error).__name__


def _query(params: Params | None) -> str:
    if not params:
        return ""
    return "?" + urlencode(params)


class Http1Pool:
    """Keep-alive connections to one ``origin``, at most ``limit`` in use at once.

    ``ssl_context`` for ``https://`` (``None``: the system's CAs, made on first use);
    ``server_hostname`` is the name checked against the certificate (default: the host);
    ``proxy`` an ``http://`` proxy URL; ``new_socket`` makes each socket (TCP keepalive).
    ``idle_timeout``: an idle connection unused this many seconds is closed (as Go's
    ``http.Transport.IdleConnTimeout``, 90 s), so a burst's connections do not stay open for
    good; ``clock`` reads the time for it.
    """

    def __init__(
        self,
        server: str,
        *,
        ssl_context: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
        proxy: str | None = None,
        new_socket: SocketFactory | None = None,
        limit: int = 100,
        idle_timeout: float = 90.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.origin = Origin.parse(server)
        self.idle_timeout = idle_timeout
        self._clock = clock
        self._proxy = _Proxy.parse(proxy) if proxy else None
        self._tls = self.origin.scheme == "https"
        self._ssl_context = ssl_context
        self._server_hostname = server_hostname or self.origin.host
        self._new_socket = new_socket or _plain_socket
        self._slots = asyncio.Semaphore(limit)
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()
        self._closed = False
        # Through a proxy without a tunnel (an http:// server), the request names the origin.
        absolute = self._proxy is not None and not self._tls
        self._target_prefix = (
            f"{self.origin.scheme}://{self.origin.authority}{self.origin.prefix}"
            if absolute
            else self.origin.prefix
        )
        self._proxy_header = (
            f"Proxy-Authorization: {self._proxy.authorization}\r\n"
            if absolute and self._proxy is not None and self._proxy.authorization
            else ""
        )

    # -- connections ---------------------------------------------------------------------------

    async def _acquire(self, connect_timeout: float | None) -> _Connection:
        if self._closed:
            raise HttpError("the client is closed")  # not a failure to retry
        await self._slots.acquire()
        self._expire_idle()
        while self._idle:
            connection = self._idle.pop()
            if connection.usable():
                connection.reused = True
                return connection
            self._discard(connection)
        try:
            async with asyncio.timeout(connect_timeout):
                connection = await self._connect()
        except BaseException:
            self._slots.release()
            raise
        self._open.add(connection)
        return connection

    def release(self, connection: _Connection, *, reusable: bool) -> None:
        """Hand ``connection`` back: to the idle ones if ``reusable``, else aborted."""
        self._slots.release()
        if reusable and not self._closed and connection.usable():
            connection.idle_since = self._clock()
            self._idle.append(connection)
            self._expire_idle()
        else:
            self._discard(connection)

    def _expire_idle(self) -> None:
        """Close the connections idle past ``idle_timeout``: the oldest are first in line
        (a connection is taken from the end, the one idle the shortest)."""
        deadline = self._clock() - self.idle_timeout
        while self._idle and self._idle[0].idle_since < deadline:
            self._discard(self._idle.pop(0))

    @property
    def idle(self) -> int:
        """How many kept-alive connections wait for a request."""
        return len(self._idle)

    def _discard(self, connection: _Connection) -> None:
        self._open.discard(connection)
        connection.abort()

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        target = self._proxy.origin if self._proxy is not None else self.origin
        sock = await self._open_socket(loop, target.host, target.port)
        try:
            if self._proxy is not None and self._tls:
                await self._tunnel(loop, sock)
            context = self._context() if self._tls else None
            reader = asyncio.StreamReader(limit=_BUFFER_LIMIT)
            try:
                _, protocol = await loop.create_connection(
                    lambda: StreamConnection(
                        reader, context, self._server_hostname if context is not None else None
                    ),
                    sock=sock,
                )
            except OSError as error:
                raise ConnectFailed(f"{target.authority}: {error}", error) from error
        except BaseException:
            sock.close()
            raise
        # The transport owns the socket from here: a failure aborts it.
        try:
            await protocol.handshake()
        except ssl.SSLError as error:
            protocol.abort()
            raise TlsFailed(f"TLS handshake with {target.authority}: {error}", error) from error
        except OSError as error:
            protocol.abort()
            raise ConnectFailed(f"{target.authority}: {error}", error) from error
        except BaseException:
            protocol.abort()
            raise
        return _Connection(reader, protocol)

    def _context(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            self._ssl_context = ssl.create_default_context()
        return self._ssl_context

    async def _open_socket(
        self, loop: asyncio.AbstractEventLoop, host: str, port: int
    ) -> socket.socket:
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as error:
            raise ConnectFailed(f"{host}: {error}", error) from error
        last: OSError | None = None
        for info in infos:
            sock = self._new_socket(info)
            try:
                sock.setblocking(False)
                await loop.sock_connect(sock, info[4])
            except OSError as error:
                sock.close()
                last = error
                continue
            except BaseException:
                sock.close()
                raise
            return sock
        assert last is not None  # getaddrinfo answers at least one address or raises
        raise ConnectFailed(f"{host}:{port}: {last}", last)

    async def _tunnel(self, loop: asyncio.AbstractEventLoop, sock: socket.socket) -> None:
        """Ask the proxy for a tunnel to the origin (``CONNECT``), before TLS starts on it."""
        assert self._proxy is not None
        authority = f"{self.origin.host}:{self.origin.port}"
        head = f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n"
        if self._proxy.authorization:
            head += f"Proxy-Authorization: {self._proxy.authorization}\r\n"
        try:
            await loop.sock_sendall(sock, (head + "\r\n").encode("latin-1"))
            answer = b""
            while b"\r\n\r\n" not in answer:
                data = await loop.sock_recv(sock, 4096)
                if not data or len(answer) > _BUFFER_LIMIT:
                    raise ConnectFailed(f"proxy {self._proxy.origin.authority} closed the tunnel")
                answer += data
        except OSError as error:
            raise ConnectFailed(f"proxy {self._proxy.origin.authority}: {error}", error) from error
        head_block, _, rest = answer.partition(b"\r\n\r\n")
        status, _ = _parse_head(head_block)
        if status != 200 or rest:
            status_line = head_block.partition(b"\r\n")[0].decode("latin-1")
            raise ConnectFailed(
                f"proxy {self._proxy.origin.authority} refused a tunnel to {authority}: "
                f"{status_line}"
            )

    async def close(self) -> None:
        """Abort every connection, idle or in use; no request can start after this."""
        self._closed = True
        connections = list(self._open)
        self._open.clear()
        self._idle.clear()
        for connection in connections:
            connection.abort()
        if connections:
            for _ in range(2):
                await asyncio.sleep(0)  # the aborted transports close their sockets

    # -- exchanges -----------------------------------------------------------------------------

    def _head(
        self,
        method: str,
        path: str,
        params: Params | None,
        headers: Iterable[tuple[str, str]],
        body: bytes | None,
    ) -> bytes:
        lines = [
            f"{method} {self._target_prefix}{path}{_query(params)} HTTP/1.1\r\n"
            f"Host: {self.origin.authority}\r\n{self._proxy_header}"
        ]
        lines.extend(f"{name}: {value}\r\n" for name, value in headers)
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body) if body is not None else 0}\r\n")
        lines.append("\r\n")
        return "".join(lines).encode("latin-1")

    async def _send(
        self,
        method: str,
        head: bytes,
        body: bytes | None,
        connect_timeout: float | None,
        read_timeout: float | None,
    ) -> tuple[_Connection, int, Headers]:
        """Send on a connection and read the answer's head. A pooled connection the server
        closed meanwhile is tried once more on a fresh one, for an idempotent method."""
        while True:
            connection = await self._acquire(connect_timeout)
            answered = False
            try:
                protocol = connection.protocol
                protocol.write(head + body if body else head)
                await protocol.drain()
                async with asyncio.timeout(read_timeout):
                    block = await connection.reader.readuntil(b"\r\n\r\n")
                    answered = True
                    status, headers = _parse_head(block[:-4])
                    while status < 200:  # 1xx: the real answer follows
                        block = await connection.reader.readuntil(b"\r\n\r\n")
                        status, headers = _parse_head(block[:-4])
                return connection, status, headers
            except TimeoutError:
                self.release(connection, reusable=False)
                raise
            except _BROKEN as error:
                self.release(connection, reusable=False)
                if connection.reused and not answered and method in _IDEMPOTENT:
                    continue  # a kept-alive connection the server had closed: not our answer
                raise ConnectionBroken(_describe(error)) from error
            except BaseException:
                self.release(connection, reusable=False)
                raise

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        headers: Iterable[tuple[str, str]] = (),
        body: bytes | None = None,
        connect_timeout: float | None = None,
        read_timeout: float | None = None,
    ) -> Response:
        """Send a request and read its whole answer. ``read_timeout`` bounds the wait for the
        head and for each MB of the body."""
        head = self._head(method, path, params, headers, body)
        connection, status, answer_headers = await self._send(
            method, head, body, connect_timeout, read_timeout
        )
        try:
            framing = _Framing(method, status, answer_headers)
            decoder = _decoder_for(answer_headers)
            parts = []
            reader = connection.reader
            # One timer for the whole body, moved on after each piece (most bodies are one).
            async with asyncio.timeout(read_timeout) as deadline:
                while not framing.done:
                    data = await framing.read(reader)
                    if not data:
                        break
                    parts.append(decoder.feed(data) if decoder is not None else data)
                    if read_timeout is not None:
                        deadline.reschedule(asyncio.get_running_loop().time() + read_timeout)
            if decoder is not None:
                parts.append(decoder.flush())
        except TimeoutError:
            self.release(connection, reusable=False)
            raise
        except _BROKEN as error:
            self.release(connection, reusable=False)
            raise ConnectionBroken(f"the answer broke off: {_describe(error)}") from error
        except BaseException:
            self.release(connection, reusable=False)
            raise
        self.release(connection, reusable=framing.keep_alive)
        body_bytes = parts[0] if len(parts) == 1 else b"".join(parts)
        return Response(status, answer_headers, body_bytes)

    async def stream(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        headers: Iterable[tuple[str, str]] = (),
        connect_timeout: float | None = None,
        idle_timeout: float | None = None,
    ) -> tuple[Response, StreamBody]:
        """Send a request and return its answer's head with its body still to be read; the
        caller closes the body."""
        head = self._head(method, path, params, headers, None)
        connection, status, answer_headers = await self._send(
            method, head, None, connect_timeout, idle_timeout
        )
        try:
            framing = _Framing(method, status, answer_headers)
            decoder = _decoder_for(answer_headers)
        except BaseException:
            self.release(connection, reusable=False)
            raise
        body = StreamBody(self, connection, framing, decoder, idle_timeout)
        return Response(status, answer_headers), body


def _plain_socket(addr_info: AddrInfo) -> socket.socket:
    return socket.socket(family=addr_info[0], type=addr_info[1], proto=addr_info[2])
