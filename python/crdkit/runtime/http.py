"""A tiny HTTP/1.1 server for ``/metrics``, ``/healthz`` and ``/readyz``.

These endpoints answer a scraper or a kubelet probe a few times a minute with a small body, so
plain ``asyncio.start_server`` is enough and the runtime needs no web framework. Requests other
than ``GET``/``HEAD`` of a known path get 405/404; every connection is closed after one answer.

A route may also answer a `Stream`: a body of unknown length written chunk by chunk as its
iterator yields them, for server-sent events (the scheduler's live page). It ends when the
iterator does, when the client goes (the next write fails), or when the server closes, which
cancels every open stream rather than waiting for clients that may never leave.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field

# Shared with the webhook room (below the runtime); still importable from here.
from crdkit._addresses import parse_bind_address

__all__ = ["HttpServer", "Response", "Stream", "parse_bind_address"]

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


@dataclass(frozen=True, slots=True)
class Stream:
    """A streamed answer: ``chunks`` are written (and flushed) as they come, with no
    ``Content-Length``; the connection's close ends the body, as HTTP/1.1 allows."""

    chunks: AsyncIterator[bytes]
    content_type: str = "text/event-stream; charset=utf-8"
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    """More response headers (``Cache-Control: no-cache`` for server-sent events)."""


Route = Callable[[], Awaitable[Response | Stream]]
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
        self._streaming: set[asyncio.Task[None]] = set()  # connections a Stream holds open
        self._closing = False

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
            self._closing = True
            # A stream ends only when its client goes; without this, wait_closed would wait
            # for every open page (up to its timeout) before the server could stop.
            for task in list(self._streaming):
                task.cancel()
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
                if isinstance(response, Response):
                    writer.write(
                        _head(
                            response.status,
                            response.content_type,
                            {"Content-Length": str(len(response.body))},
                        )
                    )
                    if not head_only:
                        writer.write(response.body)
                    await writer.drain()
                    return
                writer.write(_head(response.status, response.content_type, response.headers))
                await writer.drain()
            # Out of the timeout: a stream lasts as long as its client stays.
            if head_only:
                await _close(response.chunks)
            else:
                await self._stream(response, writer)
        except (TimeoutError, ConnectionError, ssl.SSLError):
            pass
        except asyncio.CancelledError:
            if not self._closing:
                raise
            # Cancelled by close(): the stream's end, not an error. asyncio's server asks a
            # handler task for its exception when it ends, and a cancelled one would raise
            # there and be logged as "Exception in callback".
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _stream(self, response: Stream, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None  # a connection's handler always runs in a task
        self._streaming.add(task)  # close() cancels it
        try:
            async for chunk in response.chunks:
                writer.write(chunk)
                await writer.drain()  # raises ConnectionError once the client is gone
        except (ConnectionError, ssl.SSLError):
            raise
        except Exception:
            # The headers are gone already: all that is left is to end the body and say why.
            log.exception("HTTP stream failed")
        finally:
            self._streaming.discard(task)
            await _close(response.chunks)

    async def _respond(
        self, request_line: bytes, headers: Mapping[str, str]
    ) -> tuple[Response | Stream, bool]:
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


async def _close(chunks: AsyncIterator[bytes]) -> None:
    """Run an async generator's ``finally`` now rather than when it is collected."""
    aclose = getattr(chunks, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(Exception):
            await aclose()


def _head(status: int, content_type: str, extra: Mapping[str, str]) -> bytes:
    lines = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}",
        f"Content-Type: {content_type}",
        *(f"{name}: {value}" for name, value in extra.items()),
        "Connection: close",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
