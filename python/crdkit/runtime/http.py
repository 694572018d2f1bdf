"""A tiny HTTP/1.1 server for ``/metrics``, ``/healthz`` and ``/readyz``.

These endpoints answer a scraper or a kubelet probe a few times a minute with a small body, so
plain ``asyncio.start_server`` is enough and the runtime needs no web framework. Requests other
than ``GET``/``HEAD`` of a known path get 405/404; every connection is closed after one answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

# Shared with the webhook room (below the runtime); still importable from here.
from crdkit._addresses import parse_bind_address

__all__ = ["HttpServer", "Response", "parse_bind_address"]

log = logging.getLogger("crdkit.runtime.http")

_REASONS = {
    200: "OK",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


@dataclass(frozen=True, slots=True)
class Response:
    """What a route answers."""

    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"


Route = Callable[[], Awaitable[Response]]
Authorize = Callable[[Mapping[str, str], str], Awaitable[Response | None]]
"""Given a request's headers (lower-case names) and path: ``None`` to serve it, or the refusal."""


class HttpServer:
    """Serves ``routes`` (path → coroutine) on one address until :meth:`close`."""

    def __init__(
        self,
        routes: Mapping[str, Route],
        *,
        ssl_context: ssl.SSLContext | None = None,
        authorize: Authorize | None = None,
    ) -> None:
        """``ssl_context`` serves HTTPS; ``authorize`` is asked before every route runs."""
        self._routes = dict(routes)
        self._ssl = ssl_context
        self._authorize = authorize
        self._server: asyncio.Server | None = None

    async def start(self, host: str, port: int) -> None:
        """Bind and start serving (``port`` 0 picks a free one; see :attr:`port`)."""
        self._server = await asyncio.start_server(self._handle, host, port, ssl=self._ssl)

    @property
    def port(self) -> int:
        """The port actually bound."""
        if self._server is None or not self._server.sockets:
            raise RuntimeError("the server is not started")
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        """Stop listening and wait for open connections to end."""
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(10):
                request_line = await reader.readline()
                headers: dict[str, str] = {}
                while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                response, head_only = await self._respond(request_line, headers)
                writer.write(
                    f"HTTP/1.1 {response.status} {_REASONS.get(response.status, 'Unknown')}\r\n"
                    f"Content-Type: {response.content_type}\r\n"
                    f"Content-Length: {len(response.body)}\r\n"
                    "Connection: close\r\n\r\n".encode("latin-1")
                )
                if not head_only:
                    writer.write(response.body)
                await writer.drain()
        except (TimeoutError, ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _respond(
        self, request_line: bytes, headers: Mapping[str, str]
    ) -> tuple[Response, bool]:
        parts = request_line.decode("latin-1").split()
        if len(parts) < 2:
            return Response(405, b"bad request line\n"), False
        method, target = parts[0], parts[1]
        route = self._routes.get(target.split("?", 1)[0])
        if route is None:
            return Response(404, b"not found\n"), False
        if method not in ("GET", "HEAD"):
            return Response(405, b"only GET and HEAD\n"), False
        if self._authorize is not None:
            refusal = await self._authorize(headers, target.split("?", 1)[0])
            if refusal is not None:
                return refusal, method == "HEAD"
        try:
            return await route(), method == "HEAD"
        except Exception:
            log.exception("HTTP route %s failed", target)
            return Response(500, b"internal error\n"), False
