"""The HTTP layer of :class:`~crdkit.testing.HttpFaultProxy`: TLS termination, request
recording, injected answers and watch cuts, and forwarding to the real apiserver.

It is an aiohttp server on a private loopback port, behind the byte layer of
:mod:`._proxy_tcp`, so connection faults (hold, drop, reset, latency) act on the client's TLS
bytes exactly as in the plain TCP proxy, while this layer sees each request in clear.
Everything here runs in the proxy's own event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import re
import socket
import time
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp import web

from crdkit.testing.faults._proxy_tcp import abort_with_rst

if TYPE_CHECKING:
    import ssl
    from collections.abc import Iterable

__all__ = ["InjectedFault", "RecordedRequest"]

log = logging.getLogger("crdkit.testing.faults.proxies")

# Headers that describe one hop, not the message: never copied from one side to the other.
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "content-length",
        "host",
    }
)
_SERVER_OWN = frozenset({"date", "server"})

_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    409: "Conflict",
    410: "Expired",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the proxy saw it. Times are ``time.monotonic()`` seconds, the clock
    asyncio's event loop uses, so they compare with ``loop.time()`` in the test."""

    method: str
    path: str
    query: dict[str, str]
    watch: bool
    received_at: float
    answered_at: float | None
    """When the status line went back (``None``: never answered, e.g. reset or cut early)."""
    status: int | None
    """The status the client got (``None``: none)."""
    injected: bool
    """Whether the proxy answered (or reset) it instead of the apiserver."""


@dataclass(eq=False)  # identity: it is a key of the open watches
class _Exchange:
    method: str
    path: str
    query: dict[str, str]
    watch: bool
    received_at: float
    answered_at: float | None = None
    status: int | None = None
    injected: bool = False

    def snapshot(self) -> RecordedRequest:
        return RecordedRequest(
            self.method,
            self.path,
            dict(self.query),
            self.watch,
            self.received_at,
            self.answered_at,
            self.status,
            self.injected,
        )


def _is_watch(path: str, query: dict[str, str]) -> bool:
    return query.get("watch") in ("true", "1") or "/watch/" in path


@dataclass
class InjectedFault:
    """A rule: matching requests get ``status`` (or a reset) instead of the apiserver's answer.

    Returned by :meth:`~crdkit.testing.HttpFaultProxy.fail` and ``reset_requests``; ``hits``
    counts the requests it answered, ``remaining`` how many more it will (``None``: no limit).
    """

    status: int | None
    retry_after: float | None
    methods: frozenset[str] | None
    watch: bool | None
    path: re.Pattern[str] | None
    remaining: int | None
    probability: float
    reset: bool = False
    hits: int = 0
    _random: random.Random = field(default_factory=random.Random, repr=False)
    _active: bool = field(default=True, repr=False)

    def matches(self, exchange: _Exchange) -> bool:
        if not self._active or self.remaining == 0:
            return False
        if self.methods is not None and exchange.method not in self.methods:
            return False
        if self.watch is not None and exchange.watch != self.watch:
            return False
        if self.path is not None and not self.path.search(exchange.path):
            return False
        return self.probability >= 1.0 or self._random.random() < self.probability

    def take(self) -> None:
        self.hits += 1
        if self.remaining is not None:
            self.remaining -= 1

    def deactivate(self) -> None:
        self._active = False

    @property
    def active(self) -> bool:
        """Whether it still answers matching requests (not removed, not used up)."""
        return self._active and self.remaining != 0


def new_fault(
    *,
    status: int | None,
    retry_after: float | None,
    reset: bool,
    methods: Iterable[str] | None,
    watch: bool | None,
    path: str | None,
    times: int | None,
    probability: float,
    seed: int | None,
) -> InjectedFault:
    if times is not None and times < 1:
        raise ValueError(f"times must be at least 1 (or None: no limit), got {times}")
    if not 0 < probability <= 1:
        raise ValueError(f"probability must be in (0, 1], got {probability}")
    if status is not None and not 100 <= status <= 599:
        raise ValueError(f"status must be an HTTP status code, got {status}")
    return InjectedFault(
        status=status,
        retry_after=retry_after,
        methods=frozenset(m.upper() for m in methods) if methods is not None else None,
        watch=watch,
        path=re.compile(path) if path is not None else None,
        remaining=times,
        probability=probability,
        reset=reset,
        _random=random.Random(seed),
    )


def _status_body(status: int, retry_after: float | None) -> bytes:
    """A ``metav1.Status`` like the apiserver's own, so clients map it as they would."""
    body: dict[str, object] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"injected by the crdkit fault proxy ({status})",
        "reason": _REASONS.get(status, ""),
        "code": status,
    }
    if retry_after is not None:
        body["details"] = {"retryAfterSeconds": round(retry_after)}
    return json.dumps(body).encode()


def _format_retry_after(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"


class HttpLayer:
    """The TLS-terminating forwarder. Loop-confined; started before the byte layer."""

    def __init__(
        self, upstream_url: str, upstream_ssl: ssl.SSLContext | None, server_ssl: ssl.SSLContext
    ) -> None:
        self.upstream_url = upstream_url.rstrip("/")
        self.upstream_ssl = upstream_ssl
        self.server_ssl = server_ssl
        self.exchanges: list[_Exchange] = []
        self.faults: list[InjectedFault] = []
        self.watches: dict[_Exchange, web.BaseRequest] = {}
        self.port = 0
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self._upstream_sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()

    async def start(self) -> None:
        app = web.Application(client_max_size=1024**3)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        # A handler is cancelled when its client goes away (so a watch it streams ends
        # upstream too) and at stop, not waited for.
        self._runner = web.AppRunner(
            app,
            access_log=None,
            handle_signals=False,
            shutdown_timeout=0.5,
            handler_cancellation=True,
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.server_ssl)
        await site.start()
        self.port = self._runner.addresses[0][1]
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(
                ssl=self.upstream_ssl if self.upstream_ssl is not None else True,
                limit=0,
                socket_factory=self._upstream_socket,
            ),
            auto_decompress=False,  # forward the bytes as they are, gzip included
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
        )

    async def stop(self) -> None:
        for request in list(self.watches.values()):
            abort_with_rst(request.transport)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None
        # A watch cut mid-stream leaves its upstream TLS connection in a graceful shutdown
        # that waits for the peer's close_notify; on a loaded machine that outlives the test
        # and the socket is reported unclosed. The proxy is done with them all: cut them.
        cut = 0
        for sock in self._upstream_sockets:
            if sock.fileno() != -1:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                    cut += 1
        self._upstream_sockets.clear()
        for _ in range(4 if cut else 0):
            await asyncio.sleep(0)  # the loop reads each end and closes the socket

    def _upstream_socket(self, addr_info: tuple[Any, ...]) -> socket.socket:
        sock = socket.socket(family=addr_info[0], type=addr_info[1], proto=addr_info[2])
        self._upstream_sockets.add(sock)
        return sock

    def cut_watches(self) -> int:
        """Break every watch in flight (the client sees its stream end mid-way)."""
        requests = list(self.watches.values())
        self.watches.clear()
        for request in requests:
            abort_with_rst(request.transport)
        return len(requests)

    def _fault_for(self, exchange: _Exchange) -> InjectedFault | None:
        for fault in self.faults:
            if fault.matches(exchange):
                fault.take()
                return fault
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        query = {key: request.query[key] for key in request.query}
        exchange = _Exchange(
            request.method, request.path, query, _is_watch(request.path, query), time.monotonic()
        )
        self.exchanges.append(exchange)
        fault = self._fault_for(exchange)
        if fault is not None:
            exchange.injected = True
            if fault.reset or fault.status is None:
                abort_with_rst(request.transport)
                return web.Response()  # written nowhere: the connection is gone
            headers = {"Content-Type": "application/json"}
            if fault.retry_after is not None:
                headers["Retry-After"] = _format_retry_after(fault.retry_after)
            exchange.status = fault.status
            exchange.answered_at = time.monotonic()
            return web.Response(
                status=fault.status,
                body=_status_body(fault.status, fault.retry_after),
                headers=headers,
            )
        return await self._forward(request, exchange)

    async def _forward(self, request: web.Request, exchange: _Exchange) -> web.StreamResponse:
        assert self._session is not None
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        try:
            upstream = await self._session.request(
                request.method,
                self.upstream_url + request.path_qs,
                headers=headers,
                data=body or None,
                allow_redirects=False,
                skip_auto_headers=("Accept-Encoding", "User-Agent", "Content-Type"),
            )
        except aiohttp.ClientError as exc:
            exchange.status, exchange.answered_at = 502, time.monotonic()
            return web.Response(status=502, text=f"fault proxy: upstream failed: {exc}")
        response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
        try:
            for key, value in upstream.headers.items():
                if key.lower() not in _HOP_BY_HOP and key.lower() not in _SERVER_OWN:
                    response.headers.add(key, value)
            length = upstream.headers.get("Content-Length")
            if (
                length is not None
                and request.method != "HEAD"
                and upstream.status
                not in (
                    204,
                    304,
                )
            ):
                response.content_length = int(length)
            if exchange.watch:
                self.watches[exchange] = request
            await response.prepare(request)
            exchange.status, exchange.answered_at = upstream.status, time.monotonic()
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response
        except (ConnectionError, aiohttp.ClientError) as exc:
            # The client went away or the stream was cut: nothing more to deliver.
            log.debug("fault proxy: %s %s ended: %s", request.method, request.path, exc)
            return response if response.prepared else web.Response()
        finally:
            self.watches.pop(exchange, None)
            upstream.close()
