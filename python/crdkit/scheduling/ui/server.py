"""The live page's server: ``crdkit scheduler --ui``.

Routes, all under ``/ui/`` so that one RBAC rule covers them when serving securely; the same
routes answer at the root too (``/``, ``/app.js``, ``/app.css``, ``/view.json``, ``/events``),
for a browser pointed at the bare address and for tools that read the stream there:

- ``/ui/`` (and ``/``): the page; ``/ui/app.js``, ``/ui/app.css``: its script and style;
- ``/ui/view.json``: the latest snapshot whole;
- ``/ui/events``: server-sent events. The first is the snapshot whole (``event: full``); after
  it, each time the view has a newer snapshot, ``event: delta`` with only what changed since
  the last one this client was sent (`crdkit.scheduling.ui.delta`). A client that reads slowly
  is sent fewer, larger deltas, never a queue of stale ones: each connection compares the
  latest snapshot with its own last one. A comment every `HEARTBEAT` seconds keeps proxies
  from closing a quiet stream and finds clients that left.

Plain HTTP (the default, on loopback) serves anyone who reaches the address; ``secure`` serves
HTTPS to bearer tokens RBAC allows ``get`` on the path, as ``--metrics-secure`` does (the
review is `crdkit.runtime.metrics_auth.MetricsAuthorizer`'s, by the request's path), so the
reader's ClusterRole needs::

    - nonResourceURLs: ["/ui", "/ui/*"]   # and "/", "/events"... for the root's
      verbs: ["get"]

A browser's ``EventSource`` cannot send an ``Authorization`` header, so a secure page is for a
browser behind a proxy that adds the token (or for ``curl -H "Authorization: Bearer ..."``);
for a person at a terminal, the plain page on loopback through ``kubectl port-forward`` is the
usual way.
"""

from __future__ import annotations

import asyncio
import importlib.resources
import json
import logging
from typing import TYPE_CHECKING, Protocol

from crdkit._addresses import is_loopback
from crdkit.runtime.http import HttpServer, Response, Route, Stream, parse_bind_address
from crdkit.runtime.runnable import Runnable
from crdkit.runtime.secure_serving import close_served, secure_server
from crdkit.scheduling.ui.delta import delta

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from crdkit.client.client import Client
    from crdkit.runtime.manager import Manager
    from crdkit.scheduling.view.format import Snapshot

__all__ = ["HEARTBEAT", "ViewServer", "ViewSource"]

log = logging.getLogger("crdkit.scheduling.ui")

HEARTBEAT = 15.0
"""Seconds between the event stream's keep-alive comments."""

RETRY_MS = 2000
"""How soon a page's ``EventSource`` reconnects after the stream ends (it does so by itself)."""

_ASSETS = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}


class ViewSource(Protocol):
    """What the server reads: ``crdkit.scheduling.view.snapshot.SchedulerView``'s members."""

    @property
    def seq(self) -> int: ...

    def snapshot(self) -> Snapshot: ...

    async def changed(self, after: int) -> int: ...


def _encode(data: object) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


def _event(kind: str, seq: int, data: bytes) -> bytes:
    # JSON as json.dumps writes it holds no newline, so one data line carries it whole.
    return b"event: %s\nid: %d\ndata: %s\n\n" % (kind.encode(), seq, data)


class ViewServer(Runnable):
    """Serves ``view`` on ``bind_address`` (``host:port``; port 0 picks a free one, see
    :attr:`port`) until cancelled. Every replica serves its own view, so it needs no Lease."""

    needs_leader = False

    def __init__(
        self,
        view: ViewSource,
        bind_address: str = "127.0.0.1:8090",
        *,
        secure: bool = False,
        cert_dir: Path | None = None,
    ) -> None:
        """The address is read now, so a bad one fails when the scheduler is built
        (``ValueError`` naming ``ui_bind_address``)."""
        address = parse_bind_address(bind_address, field="ui_bind_address")
        if address is None:
            raise ValueError(
                f'ui_bind_address: "{bind_address}" turns the page off; give host:port'
            )
        self.view = view
        self.address = address
        self.secure = secure
        self.cert_dir = cert_dir
        self._server: HttpServer | None = None
        self._listening = asyncio.Event()
        self._scratch: Path | None = None  # the self-signed pair's directory, deleted on close
        self._assets = {
            name: (importlib.resources.files(__package__).joinpath("assets", name).read_bytes())
            for name in _ASSETS
        }

    @property
    def port(self) -> int:
        """The port served; ``RuntimeError`` until started."""
        if self._server is None:
            raise RuntimeError("the page's server is not started")
        return self._server.port

    @property
    def url(self) -> str:
        """The page's address (``localhost`` for a server on every interface)."""
        host = self.address[0]
        shown = "localhost" if host in ("0.0.0.0", "::", "") else host
        if ":" in shown:
            shown = f"[{shown}]"
        return f"{'https' if self.secure else 'http'}://{shown}:{self.port}/ui/"

    async def listening(self) -> str:
        """The page's address, once the server listens (as a runnable it starts with the
        manager's others: wait for it here rather than poll `url`)."""
        await self._listening.wait()
        return self.url

    async def run(self, manager: Manager) -> None:
        await self.start(manager.client)
        try:
            await asyncio.Event().wait()  # serve until cancelled
        finally:
            await self.close()

    async def start(self, client: Client | None = None) -> None:
        """Bind and serve; ``client`` checks callers' tokens when ``secure``."""
        host, port = self.address
        routes: dict[str, Route] = {
            "/ui": self._page,
            "/ui/": self._page,
            "/ui/index.html": self._page,
            "/ui/app.js": self._asset("app.js"),
            "/ui/app.css": self._asset("app.css"),
            "/ui/view.json": self._json,
            "/ui/events": self._events,
        }
        routes.update({path.removeprefix("/ui") or "/": route for path, route in routes.items()})
        if self.secure:
            if client is None:
                raise ValueError("ui: serving securely needs a client to review tokens with")
            server, self._scratch = secure_server(
                routes, client=client, cert_dir=self.cert_dir, scratch_prefix="crdkit-ui-"
            )
        else:
            if not is_loopback(host):
                log.warning(
                    "serving the scheduler's page over plain HTTP to anyone who can reach "
                    "%s:%d; secure serving (HTTPS, tokens RBAC allows) is the way off loopback",
                    host,
                    port,
                )
            server = HttpServer(routes)
        await server.start(host, port)
        self._server = server
        self._listening.set()
        log.info("the scheduler's page is at %s", self.url)

    async def close(self) -> None:
        self._listening.clear()
        server, scratch, self._server, self._scratch = self._server, self._scratch, None, None
        await close_served(server, scratch)

    async def _page(self) -> Response:
        return Response(200, self._assets["index.html"], _ASSETS["index.html"])

    def _asset(self, name: str) -> Route:
        async def serve() -> Response:
            return Response(200, self._assets[name], _ASSETS[name])

        return serve

    async def _json(self) -> Response:
        return Response(200, _encode(self.view.snapshot()), "application/json")

    async def _events(self) -> Stream:
        return Stream(
            self._stream(),
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def _stream(self) -> AsyncIterator[bytes]:
        sent = self.view.snapshot()
        yield b"retry: %d\n" % RETRY_MS + _event("full", sent["seq"], _encode(sent))
        while True:
            try:
                async with asyncio.timeout(HEARTBEAT):
                    await self.view.changed(sent["seq"])
            except TimeoutError:
                yield b": heartbeat\n\n"
                continue
            latest = self.view.snapshot()
            change = delta(sent, latest)
            if change is None:  # nodes came or went: only the whole says that
                yield _event("full", latest["seq"], _encode(latest))
            else:
                yield _event("delta", latest["seq"], _encode(change))
            sent = latest
