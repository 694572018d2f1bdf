"""The byte layer of the fault proxies: accept, connect upstream, pump, and misbehave on cue.

Everything here runs in the proxy's own event loop (see :mod:`crdkit.testing.faults.proxies`); the
public classes call in through it. Each accepted connection is a ``_Link`` with two
directions. A direction is a reader that never stops reading (so a peer's FIN or RST is seen
even while nothing flows) feeding a queue, and a writer that delivers the queue when the link
may flow, each chunk no sooner than the latency in force when it was read. Holding a link
stops its writers; freezing it also makes its readers discard, for good.

The upstream connection is made only when a link first may flow: through a partition the
server never sees the client's connection at all, as with a real one.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import socket
import struct
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

__all__ = ["FaultMode", "abort_with_rst"]

log = logging.getLogger("crdkit.testing.faults.proxies")

CHUNK = 64 * 1024


class FaultMode(enum.StrEnum):
    """What the proxy does with connections; see :class:`~crdkit.testing.TcpFaultProxy`."""

    PASS = "pass"
    """Forward every byte both ways."""
    HOLD = "hold"
    """A blackhole: accept connections, keep them open, forward nothing either way."""
    DROP = "drop"
    """Close every connection (a FIN), and each new one as soon as it is accepted."""
    REFUSE = "refuse"
    """Stop listening: new connections are refused; existing ones are left as they are."""
    RESET = "reset"
    """Reset every connection (an RST), and each new one as soon as it is accepted."""
    LATENCY = "latency"
    """Forward every byte, each chunk delayed by the configured latency."""


class _Eof:
    """Queued after a direction's last chunk: the peer half-closed."""


class _Rst:
    """Queued after a direction's last chunk: the peer reset the connection."""


EOF, RST = _Eof(), _Rst()
Item = bytes | _Eof | _Rst


def abort_with_rst(transport: asyncio.WriteTransport | None) -> None:
    """Close a connection with an RST instead of a FIN (SO_LINGER with a zero timeout).

    Shared with the HTTP layer, which resets a request's connection the same way.
    """
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


class _Link:
    """One proxied connection: the client's end, the upstream end, and the pumps between."""

    def __init__(
        self,
        core: TcpFaults,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        flowing: bool,
        frozen: bool,
    ) -> None:
        self.core = core
        self.client_reader = reader
        self.client_writer = writer
        self.upstream_writer: asyncio.StreamWriter | None = None
        self.to_upstream: asyncio.Queue[tuple[float, Item]] = asyncio.Queue()
        self.to_client: asyncio.Queue[tuple[float, Item]] = asyncio.Queue()
        self.flowing = asyncio.Event()
        if flowing:
            self.flowing.set()
        self.frozen = frozen
        self.closed = False
        self.tasks: set[asyncio.Task[None]] = set()
        self.half_closed = 0

    def start(self) -> None:
        self._spawn(self._read(self.client_reader, self.to_upstream, from_client=True))
        self._spawn(self._connect_and_forward())

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # -- state changes, from the core ------------------------------------------------------

    def hold(self, *, freeze: bool) -> None:
        self.flowing.clear()
        if freeze:
            self.frozen = True

    def resume(self) -> None:
        if not self.frozen:
            self.flowing.set()

    def close(self) -> None:
        """FIN both ends and stop pumping."""
        self._finish(reset=False)

    def reset(self) -> None:
        """RST both ends and stop pumping."""
        self._finish(reset=True)

    def _finish(self, *, reset: bool) -> None:
        if self.closed:
            return
        self.closed = True
        for writer in (self.client_writer, self.upstream_writer):
            if writer is None:
                continue
            if reset:
                abort_with_rst(writer.transport)
            else:
                writer.close()
        current = asyncio.current_task()
        for task in list(self.tasks):
            if task is not current:
                task.cancel()
        self.core.forget(self)

    # -- pumps -----------------------------------------------------------------------------

    async def _read(
        self,
        source: asyncio.StreamReader,
        queue: asyncio.Queue[tuple[float, Item]],
        *,
        from_client: bool,
    ) -> None:
        loop = asyncio.get_running_loop()
        last: Item = EOF
        try:
            while data := await source.read(CHUNK):
                if self.frozen:
                    continue  # a dead path: what is sent into it is gone
                queue.put_nowait((loop.time() + self.core.latency, data))
        except OSError:  # reset, or broken in some other way: pass it on as a reset
            last = RST
        if self.frozen:
            # The client giving up on a dead connection ends it; the server ending it is
            # never heard of on the client's side.
            if from_client:
                self.close()
            return
        queue.put_nowait((loop.time() + self.core.latency, last))

    async def _write(
        self, sink: asyncio.StreamWriter, queue: asyncio.Queue[tuple[float, Item]]
    ) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due, item = await queue.get()
            await self.flowing.wait()
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
                await self.flowing.wait()  # a hold that began during the delay
            if isinstance(item, _Rst):
                self.reset()
                return
            if isinstance(item, _Eof):
                self.half_closed += 1
                if self.half_closed == 2 or not sink.can_write_eof():
                    self.close()
                else:
                    with contextlib.suppress(OSError):
                        sink.write_eof()
                return
            try:
                sink.write(item)
                await sink.drain()
            except (ConnectionError, OSError):
                self.reset()
                return

    async def _connect_and_forward(self) -> None:
        await self.flowing.wait()
        host, port = self.core.upstream
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError as exc:
            log.debug("fault proxy: upstream %s:%s unreachable: %s", host, port, exc)
            self.reset()  # what a client sees of a proxy whose backend is down
            return
        if self.closed:
            writer.close()
            return
        self.upstream_writer = writer
        self._spawn(self._read(reader, self.to_client, from_client=False))
        self._spawn(self._write(self.client_writer, self.to_client))
        await self._write(writer, self.to_upstream)


class TcpFaults:
    """The listening socket and every link, in one mode at a time. Loop-confined."""

    def __init__(
        self,
        upstream: tuple[str, int],
        host: str,
        port: int,
        *,
        on_accept: Callable[[], None] | None = None,
    ) -> None:
        self.upstream = upstream
        self.host = host
        self.port = port
        self.mode = FaultMode.PASS
        self.latency = 0.0
        self.freeze_held = False
        self.links: set[_Link] = set()
        self.accepted = 0
        self._server: asyncio.Server | None = None
        self._on_accept = on_accept

    async def start(self) -> None:
        await self._listen()

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(
            self._accept, self.host, self.port, reuse_address=True
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        links = list(self.links)
        tasks = [task for link in links for task in link.tasks]
        for link in links:
            link.close()
        await asyncio.gather(*tasks, return_exceptions=True)

    def forget(self, link: _Link) -> None:
        self.links.discard(link)

    async def set_mode(self, mode: FaultMode, *, latency: float = 0.0, resume: bool = True) -> None:
        previous = self.mode
        self.mode = mode
        self.latency = latency if mode is FaultMode.LATENCY else 0.0
        if mode is FaultMode.HOLD:
            self.freeze_held = not resume
            for link in list(self.links):
                link.hold(freeze=not resume)
        elif mode in (FaultMode.DROP, FaultMode.RESET):
            self.close_all(reset=mode is FaultMode.RESET)
        elif mode is not FaultMode.REFUSE:
            for link in list(self.links):
                link.resume()
        if mode is FaultMode.REFUSE and self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        elif mode is not FaultMode.REFUSE and previous is FaultMode.REFUSE:
            await self._listen()

    def freeze(self) -> int:
        """Every open link goes silent for good; new ones are not affected."""
        links = [link for link in self.links if not link.frozen]
        for link in links:
            link.hold(freeze=True)
        return len(links)

    def close_all(self, *, reset: bool) -> int:
        links = list(self.links)
        for link in links:
            if reset:
                link.reset()
            else:
                link.close()
        return len(links)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        if self._on_accept is not None:
            self._on_accept()
        if self.mode is FaultMode.DROP:
            writer.close()
            return
        if self.mode is FaultMode.RESET:
            abort_with_rst(writer.transport)
            return
        held = self.mode is FaultMode.HOLD
        link = _Link(
            self,
            reader,
            writer,
            flowing=not held,
            frozen=held and self.freeze_held,
        )
        self.links.add(link)
        link.start()
