"""The raw request layer: bytes in, bytes out, every answer's status checked.

Everything above this module (typed CRUD, watches, informers) goes through ``Transport``, so
the rules live in one place:

- every request has a connect timeout and a read timeout, and a non-streaming one a total
  timeout; a watch has an idle timeout instead (``Timeouts.watch_idle``): nothing waits on a
  dead socket;
- every connection has TCP keepalive on (``TcpKeepalive``: probes after 30 s of silence, every
  10 s, 3 of them), and a user timeout as long, so the kernel itself gives up on a peer that
  vanished without a FIN or RST;
- a non-2xx answer becomes the matching :mod:`crdkit.client.errors` exception;
- a failed attempt is retried as :class:`~crdkit.client.retry.RetryPolicy` decides, for
  requests and watches alike: 429 (and 5xx carrying ``Retry-After``) after the server's delay;
  a connection that could not be made, for any method; a connection that broke, for GET only;
- a 401 makes the credentials refresh once (rotated token, expired exec token) and retries.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

# The version from its own module: the package root imports the client and the runtime under
# type checking, so `from crdkit import __version__` here closed an import cycle through them.
from crdkit._version import VERSION
from crdkit.client.errors import (
    RequestTimeout,
    TransportError,
    api_error_from_response,
)
from crdkit.client.http1 import (
    AddrInfo,
    ConnectFailed,
    ConnectionBroken,
    Http1Pool,
    HttpError,
    Params,
    Response,
    SocketFactory,
    StreamBody,
    TlsFailed,
)
from crdkit.client.retry import ConnectionFailure, RetryPolicy, retry_after_seconds

if TYPE_CHECKING:
    from crdkit.client.config import ClientConfig, Timeouts

__all__ = [
    "ApiTransport",
    "ChunkStream",
    "Params",
    "TcpKeepalive",
    "Transport",
    "keepalive_socket_factory",
]

log = logging.getLogger(__name__)

JSON = "application/json"
Sleep = Callable[[float], Awaitable[None]]


def _user_agent() -> str:
    return f"crdkit/{VERSION}"


@dataclass(frozen=True)
class TcpKeepalive:
    """TCP keepalive for every connection to the apiserver (seconds, probes).

    A peer that vanished (a node that lost power, a NAT entry that expired) sends no FIN: the
    kernel only finds out by probing. Linux's default waits two hours before the first probe;
    these settings notice within ``idle + interval * count`` (60 s), for idle pooled
    connections as well as for requests whose bytes are never acknowledged.
    """

    idle: float = 30.0
    interval: float = 10.0
    count: int = 3

    def __post_init__(self) -> None:
        if self.idle < 1 or self.interval < 1 or self.count < 1:
            raise ValueError(
                f"keepalive needs idle >= 1 s, interval >= 1 s and count >= 1, got {self}"
            )

    @property
    def user_timeout(self) -> float:
        """How long written data may go unacknowledged before the kernel drops the connection."""
        return self.idle + self.interval * self.count

    def apply(self, sock: socket.socket) -> None:
        """Set the options on ``sock`` (those the platform has)."""
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        options = (
            ("TCP_KEEPIDLE", round(self.idle)),
            ("TCP_KEEPALIVE", round(self.idle)),  # macOS's name for the idle time
            ("TCP_KEEPINTVL", round(self.interval)),
            ("TCP_KEEPCNT", self.count),
            ("TCP_USER_TIMEOUT", round(self.user_timeout * 1000)),  # milliseconds
        )
        for name, value in options:
            option = getattr(socket, name, None)
            if option is not None:
                sock.setsockopt(socket.IPPROTO_TCP, option, value)


def keepalive_socket_factory(keepalive: TcpKeepalive) -> SocketFactory:
    """A socket factory for the connection pool: plain TCP sockets with ``keepalive`` set."""

    def make(addr_info: AddrInfo) -> socket.socket:
        family, kind, proto = addr_info[0], addr_info[1], addr_info[2]
        sock = socket.socket(family=family, type=kind, proto=proto)
        try:
            keepalive.apply(sock)
        except OSError:
            sock.close()
            raise
        return sock

    return make


def _connection_failure(error: HttpError) -> ConnectionFailure | None:
    """How far the request got, or ``None`` for failures a retry cannot fix."""
    if isinstance(error, TlsFailed):
        return None  # a certificate or TLS mismatch stays one
    if isinstance(error, ConnectFailed):
        return ConnectionFailure.NOT_SENT
    if isinstance(error, ConnectionBroken):
        return ConnectionFailure.BROKEN
    return None


def _unreachable_reason(error: ConnectFailed) -> str:
    """``connection refused``, ``name or service not known``: the OS's words, lower-cased."""
    os_error = error.os_error
    if os_error is None:
        text = str(error)
    elif isinstance(os_error, socket.gaierror) or os_error.errno is None:
        text = os_error.strerror or str(os_error) or type(os_error).__name__
    else:
        try:
            text = os.strerror(os_error.errno)
        except ValueError:
            text = str(os_error)
    return text[:1].lower() + text[1:]


class ChunkStream(Protocol):
    """A watch body: ``readany`` returns the next bytes, ``b""`` once the server ended it."""

    async def readany(self) -> bytes: ...


class ApiTransport(Protocol):
    """What :class:`~crdkit.client.Client` needs of its HTTP layer: :class:`Transport`, or an
    in-memory apiserver for unit tests (``crdkit.testing.FakeCluster``).

    ``request`` returns the body of a 2xx answer and raises the
    :mod:`crdkit.client.errors` exception of any other; ``stream`` opens a watch and yields
    its body.
    """

    @property
    def is_open(self) -> bool: ...

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        accept: str = JSON,
        timeouts: Timeouts | None = None,
    ) -> bytes: ...

    def stream(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        accept: str = JSON,
        idle_timeout: float | None = None,
        connect_timeout: float | None = None,
    ) -> AbstractAsyncContextManager[ChunkStream]: ...


class _Answer(Protocol):
    """What the retry loop reads of an answer: its status and headers."""

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...


_AnswerT = TypeVar("_AnswerT", bound=_Answer)


@dataclass(frozen=True)
class _Streamed:
    """A streamed answer: its head, and its body still to be read."""

    status: int
    headers: Mapping[str, str]
    body: StreamBody


class Transport:
    """HTTP/1.1 connections to one apiserver (:mod:`crdkit.client.http1`). Open it inside the
    event loop that uses it.

    ``retry`` decides which failed attempts are sent again (``max_retries`` is a shortcut for
    its bound); ``max_connections`` bounds the connections in use at once (a watch holds one);
    ``keepalive`` (``None``: the kernel's defaults) applies to every connection; ``sleep`` is
    what waits between attempts, injectable so tests need not wait.
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        retry: RetryPolicy | None = None,
        max_retries: int | None = None,
        max_connections: int = 100,
        keepalive: TcpKeepalive | None = TcpKeepalive(),
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        policy = retry or RetryPolicy()
        if max_retries is not None:
            policy = RetryPolicy(
                max_retries=max_retries,
                max_retry_wait=policy.max_retry_wait,
                backoff_initial=policy.backoff_initial,
                backoff_max=policy.backoff_max,
                random=policy.random,
            )
        if max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, got {max_connections}")
        self.config = config
        self.retry = policy
        self.keepalive = keepalive
        self._sleep = sleep
        self._max_connections = max_connections
        self._pool: Http1Pool | None = None
        self._user_agent = _user_agent()
        self._unreachable: str | None = None
        # None: the pool's plain sockets.
        self._new_socket: SocketFactory | None = (
            keepalive_socket_factory(keepalive) if keepalive else None
        )

    @property
    def connection_problem(self) -> str | None:
        """``cannot reach https://...: connection refused`` while the apiserver cannot be
        reached (the last attempt to connect failed), ``None`` once an answer came back.

        Logged as a warning when it starts and at info when it ends, so an operator pointed
        at the wrong address says so from its first attempt, not after its retries ran out.
        """
        return self._unreachable

    def _note_connection(self, error: HttpError | None) -> None:
        if error is None:
            if self._unreachable is not None:
                self._unreachable = None
                log.info("reached %s again", self.config.server)
            return
        if not isinstance(error, ConnectFailed) or isinstance(error, TlsFailed):
            return  # reached, then broken or refused by TLS: not an unreachable server
        problem = f"cannot reach {self.config.server}: {_unreachable_reason(error)}"
        if self._unreachable is None:
            log.warning("%s; retrying", problem)
        self._unreachable = problem

    async def open(self) -> None:
        if self._pool is None:
            self._pool = Http1Pool(
                self.config.server,
                ssl_context=self.config.ssl_context,
                server_hostname=self.config.tls_server_name,
                proxy=self.config.proxy,
                new_socket=self._new_socket,
                limit=self._max_connections,
            )

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            # Every connection is aborted, not shut down gracefully: a TLS peer that does not
            # answer the close_notify (a watch cut by a proxy) would hold its socket open
            # past the event loop's end.
            await pool.close()

    @property
    def is_open(self) -> bool:
        """Whether ``open`` was called (and ``close`` not since)."""
        return self._pool is not None

    @property
    def pool(self) -> Http1Pool:
        if self._pool is None:
            raise RuntimeError("the client is not open: use `async with Client(...)`")
        return self._pool

    async def _headers(self, accept: str, content_type: str | None) -> list[tuple[str, str]]:
        headers = [("Accept", accept), ("User-Agent", self._user_agent)]
        headers.append(("Accept-Encoding", "gzip" if self.config.compression else "identity"))
        if content_type is not None:
            headers.append(("Content-Type", content_type))
        authorization = await self.config.credentials.authorization()
        if authorization:
            headers.append(("Authorization", authorization))
        return headers

    async def _wait_before_retry(
        self, method: str, path: str, delay: float, retries: int, why: object
    ) -> None:
        log.debug("%s %s: %s; retry %d in %.2fs", method, path, why, retries, delay)
        await self._sleep(delay)

    def _connection_retry_delay(self, method: str, error: HttpError, retries: int) -> float | None:
        failure = _connection_failure(error)
        if failure is None:
            return None
        return self.retry.after_connection_failure(method, failure, retries)

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        accept: str = JSON,
        timeouts: Timeouts | None = None,
    ) -> bytes:
        """Send one request and return the body of its 2xx answer, or raise.

        The timeouts apply to each attempt; retries (see the module docstring) add their
        waits. A caller with a deadline of its own wraps the call in ``asyncio.timeout``.
        """
        limits = timeouts or self.config.timeouts

        async def attempt(headers: list[tuple[str, str]]) -> Response:
            async with asyncio.timeout(limits.total):
                return await self.pool.request(
                    method,
                    path,
                    params=params,
                    headers=headers,
                    body=body,
                    connect_timeout=limits.connect,
                    read_timeout=limits.read,
                )

        answer = await self._send(
            method,
            path,
            attempt,
            _read_body,
            accept=accept,
            content_type=content_type if body is not None else None,
            timed_out=lambda exc: f"{method} {path}: timed out ({exc or 'no answer'})",
        )
        return answer.body

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        accept: str = JSON,
        idle_timeout: float | None = None,
        connect_timeout: float | None = None,
    ) -> AsyncIterator[StreamBody]:
        """Open a long response (a watch) and yield its body stream once the status is 2xx.

        ``idle_timeout`` (default ``Timeouts.watch_idle``) bounds the silence before the
        answer and between two chunks: a connection that died without a FIN is noticed
        then, and reads past it raise ``TimeoutError`` (the watch parser turns it into
        ``RequestTimeout``). Opening the stream is retried like a request (429 after
        ``Retry-After``, a refused or broken connection with backoff).
        """
        idle = idle_timeout or self.config.timeouts.watch_idle
        connect = connect_timeout or self.config.timeouts.connect

        async def attempt(headers: list[tuple[str, str]]) -> _Streamed:
            head, body = await self.pool.stream(
                method,
                path,
                params=params,
                headers=headers,
                connect_timeout=connect,
                idle_timeout=idle,
            )
            return _Streamed(head.status, head.headers, body)

        answer = await self._send(
            method,
            path,
            attempt,
            _drain,
            accept=accept,
            content_type=None,
            timed_out=lambda exc: f"{method} {path}: timed out opening the stream",
        )
        try:
            yield answer.body
        finally:
            answer.body.close()

    async def _send(
        self,
        method: str,
        path: str,
        attempt: Callable[[list[tuple[str, str]]], Awaitable[_AnswerT]],
        error_body: Callable[[_AnswerT], Awaitable[bytes]],
        *,
        accept: str,
        content_type: str | None,
        timed_out: Callable[[TimeoutError], str],
    ) -> _AnswerT:
        """Send with ``attempt`` until an answer is 2xx, and return that answer.

        ``request`` and ``stream`` differ only in how one attempt is made (read whole, or
        kept open) and what a timeout is called; the retry rules (see the module docstring)
        must be the same for both, so they live here once. ``error_body`` reads a non-2xx
        answer's body (and releases it) for the error raised from it.
        """
        retries = 0
        refreshed = False
        while True:
            headers = await self._headers(accept, content_type)
            try:
                answer = await attempt(headers)
            except TimeoutError as exc:
                raise RequestTimeout(timed_out(exc)) from exc
            except HttpError as exc:
                self._note_connection(exc)
                delay = self._connection_retry_delay(method, exc, retries)
                if delay is None:
                    raise TransportError(f"{method} {path}: {exc}") from exc
                retries += 1
                await self._wait_before_retry(method, path, delay, retries, exc)
                continue
            self._note_connection(None)
            if 200 <= answer.status < 300:
                return answer
            data = await error_body(answer)
            if answer.status == 401 and not refreshed:
                refreshed = True
                self.config.credentials.invalidate()
                continue
            delay = self.retry.after_status(answer.status, answer.headers, retries)
            if delay is not None:
                retries += 1
                await self._wait_before_retry(method, path, delay, retries, answer.status)
                continue
            raise api_error_from_response(
                answer.status, data, retry_after=_retry_after_header(answer.headers)
            )


async def _read_body(answer: Response) -> bytes:
    """The body of a request's error answer: already read with the rest."""
    return answer.body


async def _drain(answer: _Streamed) -> bytes:
    """The body of a stream's error answer, as far as it can be read; the body closed."""
    try:
        return await answer.body.read()
    except (TimeoutError, HttpError):
        return b""
    finally:
        answer.body.close()


def _retry_after_header(headers: Mapping[str, str]) -> float | None:
    if "Retry-After" not in headers:
        return None
    return retry_after_seconds(headers, 0.0)
