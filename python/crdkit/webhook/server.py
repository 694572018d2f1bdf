"""The HTTPS server of admission webhooks (``POST`` of ``AdmissionReview`` v1) and conversion
webhooks (``ConversionReview`` v1 at ``/convert``).

A small asyncio HTTP/1.1 server, like :mod:`crdkit.runtime.http` but for POST bodies over TLS
and many requests at once. An unknown path is 404, another method than POST 405, a body that
is not an ``AdmissionReview`` 400.

It is built for a restart that loses no request:

* every answer closes its connection, so the apiserver never sends a request on a connection
  the server is about to close (a failure it would not retry);
* a replacement server in the same process (a Manager restarted in place, or its webhook
  server) is handed the listening socket itself: both accept from one queue until the old one
  stops, and nothing queued is ever reset, since the socket never closes;
* across processes, the listening socket is bound with ``SO_REUSEPORT``: a replacement server
  can listen on the port before this one stops. Linux resets the connections still queued on a
  listening socket when it closes (unless ``net.ipv4.tcp_migrate_req`` is 1), so
  :meth:`WebhookServer.close` first accepts everything queued, then closes the socket in the
  same step, with no await in between: only a connection completing its handshake in those
  microseconds is reset;
* each connection is tracked from the moment it is accepted, before its TLS handshake, so that
  :meth:`WebhookServer.close` stops listening and then serves every connection already
  accepted (``asyncio.start_server(ssl=...)`` would only show it after the handshake, and a
  connection caught mid-handshake at shutdown would be left unanswered).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from typing import TYPE_CHECKING, Any

from crdkit.webhook.admission import BadReview, Webhook, review
from crdkit.webhook.conversion import CONVERT_PATH, Conversion, convert_review

if TYPE_CHECKING:
    import ssl
    from collections.abc import Sequence

__all__ = ["MAX_BODY", "WebhookServer"]

log = logging.getLogger("crdkit.webhook")

MAX_BODY = 8 * 1024 * 1024
"""Larger request bodies are refused (413); the apiserver's own limit on objects is 3 MiB."""

_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    413: "Payload Too Large",
}


class _HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _Listeners:
    """The listening sockets of this process's webhook servers, by address, shared by every
    server on that address, so that a replacement takes over the queue instead of competing
    with it; the socket closes when its last server does."""

    def __init__(self) -> None:
        self._open: dict[tuple[str, int], tuple[socket.socket, int]] = {}

    def acquire(self, host: str, port: int) -> tuple[socket.socket, tuple[str, int]]:
        """A socket of its own (a duplicate) listening on ``host:port``, and the address key."""
        if port and (host, port) in self._open:
            sock, users = self._open[(host, port)]
            self._open[(host, port)] = (sock, users + 1)
            return sock.dup(), (host, port)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((host, port))
            sock.listen(128)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        key = (host, int(sock.getsockname()[1]))
        self._open[key] = (sock, 1)
        return sock.dup(), key

    def shared(self, key: tuple[str, int]) -> bool:
        """Whether another server of this process listens on the same socket."""
        return self._open.get(key, (None, 0))[1] > 1

    def release(self, key: tuple[str, int]) -> None:
        sock, users = self._open.pop(key)
        if users > 1:
            self._open[key] = (sock, users - 1)
        else:
            sock.close()


_LISTENERS = _Listeners()


class WebhookServer:
    """Serves ``webhooks`` over TLS with ``ssl_context`` until :meth:`close`.

    ``read_timeout`` bounds how long a connection may take to send its request; ``grace`` how
    long :meth:`close` waits for requests already accepted before cancelling them.
    """

    def __init__(
        self,
        webhooks: Sequence[Webhook[Any]],
        ssl_context: ssl.SSLContext,
        *,
        conversions: Sequence[Conversion] = (),
        grace: float = 15.0,
        read_timeout: float = 30.0,
    ) -> None:
        self._routes: dict[str, tuple[Webhook[Any], bool]] = {}
        for webhook in webhooks:
            for path, mutate, present in (
                (webhook.validate_path, False, webhook.validator is not None),
                (webhook.mutate_path, True, webhook.defaulter is not None),
            ):
                if present:
                    if path in self._routes:
                        raise ValueError(f"two webhooks serve {path}: one per kind")
                    self._routes[path] = (webhook, mutate)
        kinds = [c.group_kind for c in conversions]
        if len(set(kinds)) != len(kinds):
            raise ValueError("two conversions for one kind: one Conversion per kind")
        self._conversions = list(conversions)
        self._ssl = ssl_context
        self._grace = grace
        self._read_timeout = read_timeout
        self._server: asyncio.Server | None = None
        self._socket: socket.socket | None = None
        self._address: tuple[str, int] | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.requests = 0
        """Reviews answered (allowed or not)."""

    @property
    def paths(self) -> list[str]:
        return sorted([*self._routes, *([CONVERT_PATH] if self._conversions else [])])

    async def start(self, host: str, port: int) -> None:
        """Bind (``port`` 0: a free one, see :attr:`port`) and serve; on an address another
        server of this process listens on, share its listening socket."""
        sock, key = _LISTENERS.acquire(host, port)
        try:
            self._server = await asyncio.start_server(self._accepted, sock=sock)
        except BaseException:
            sock.close()
            _LISTENERS.release(key)
            raise
        # Kept to drain its queue on close (the server's own socket objects do not accept).
        self._socket = sock
        self._address = key

    @property
    def sockets(self) -> tuple[socket.socket, ...]:
        """The listening sockets (asyncio's views of them), empty when not serving."""
        return tuple(self._server.sockets) if self._server is not None else ()

    @property
    def port(self) -> int:
        """The port actually bound."""
        if self._server is None or not self._server.sockets:
            raise RuntimeError("the webhook server is not started")
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        """Stop listening, answer the connections already accepted (up to ``grace`` seconds),
        then cancel what is left."""
        if self._server is None:
            return
        assert self._address is not None
        # A server sharing the socket takes what is queued; otherwise accept it all now, and
        # close right after the drain, with no await in between.
        queued = [] if _LISTENERS.shared(self._address) else self._drain()
        self._server.close()
        _LISTENERS.release(self._address)
        await self._server.wait_closed()
        self._server = self._socket = None
        self._address = None
        loop = asyncio.get_running_loop()
        for conn in queued:
            task = loop.create_task(self._serve_queued(conn))
            self._connections.add(task)
            task.add_done_callback(self._connections.discard)
        pending = set(self._connections)
        if pending:
            _, late = await asyncio.wait(pending, timeout=self._grace)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)

    def _drain(self) -> list[socket.socket]:
        queued: list[socket.socket] = []
        assert self._socket is not None
        while True:
            try:
                conn, _ = self._socket.accept()
            except (BlockingIOError, InterruptedError):
                return queued
            except OSError:
                log.warning("draining the webhook server's queue failed", exc_info=True)
                return queued
            queued.append(conn)

    async def _serve_queued(self, conn: socket.socket) -> None:
        try:
            reader, writer = await asyncio.open_connection(sock=conn)
        except OSError:
            conn.close()
            return
        await self._connection(reader, writer)

    def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # A plain callback, not a coroutine: the task exists (and is tracked) at once.
        task = asyncio.get_running_loop().create_task(self._connection(reader, writer))
        self._connections.add(task)
        task.add_done_callback(self._connections.discard)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(self._read_timeout):
                await writer.start_tls(self._ssl)
                method, path, body = await self._read_request(reader)
            status, content_type, payload = await self._respond(method, path, body)
        except _HttpError as error:
            status, content_type = error.status, "text/plain; charset=utf-8"
            payload = f"{error.message}\n".encode()
        except (TimeoutError, ConnectionError, OSError, asyncio.IncompleteReadError):
            # A client gone or too slow, or a failed handshake: nothing to answer.
            await self._close(writer)
            return
        try:
            writer.write(
                f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}\r\n"
                f"Content-Type: {content_type}\r\n"
                f"Content-Length: {len(payload)}\r\n"
                "Connection: close\r\n\r\n".encode("latin-1")
                + payload
            )
            await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            await self._close(writer)

    @staticmethod
    async def _close(writer: asyncio.StreamWriter) -> None:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()

    async def _read_request(self, reader: asyncio.StreamReader) -> tuple[str, str, bytes]:
        parts = (await reader.readline()).decode("latin-1").split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise _HttpError(400, "not an HTTP/1.x request line")
        method, target = parts[0], parts[1]
        headers: dict[str, str] = {}
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b"\n"):
                break
            if not line:
                raise asyncio.IncompleteReadError(line, None)
            name, sep, value = line.decode("latin-1").partition(":")
            if not sep:
                raise _HttpError(400, f"a header line without ':': {line[:40]!r}")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "identity").lower() != "identity":
            # The apiserver always sends a Content-Length; chunked bodies are not needed.
            raise _HttpError(411, "a Content-Length is required")
        length_text = headers.get("content-length", "0")
        if not length_text.isdigit():
            raise _HttpError(400, f"Content-Length must be a number, got {length_text!r}")
        length = int(length_text)
        if length > MAX_BODY:
            raise _HttpError(413, f"the body may be at most {MAX_BODY} bytes, got {length}")
        body = await reader.readexactly(length) if length else b""
        return method, target.split("?", 1)[0], body

    async def _respond(self, method: str, path: str, body: bytes) -> tuple[int, str, bytes]:
        route = self._routes.get(path)
        converting = path == CONVERT_PATH and bool(self._conversions)
        if route is None and not converting:
            raise _HttpError(404, f"no webhook at {path}")
        if method != "POST":
            raise _HttpError(405, "webhooks take POST")
        if converting:
            try:
                answer = convert_review(self._conversions, json.loads(body))
            except ValueError as error:  # ConversionError and json's errors
                raise _HttpError(400, f"not a ConversionReview: {error}") from error
            self.requests += 1
            return 200, "application/json", json.dumps(answer).encode()
        assert route is not None
        webhook, mutate = route
        try:
            answer = await review(webhook, json.loads(body), mutate=mutate)
        except (ValueError, BadReview) as error:  # json's errors are ValueErrors
            raise _HttpError(400, f"not an AdmissionReview: {error}") from error
        self.requests += 1
        return 200, "application/json", json.dumps(answer).encode()
