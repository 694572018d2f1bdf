"""One client connection's bytes, plain or through TLS on memory BIOs, into a ``StreamReader``.

asyncio's own TLS transport keeps a 256 KiB receive buffer for every connection, allocated and
zeroed when it opens: an operator whose 32 workers each hold a kept-alive connection to the
apiserver carries 8 MB of it, a fifth of a small operator's whole footprint. Here the
``ssl.SSLObject`` reads what the socket delivered, in records, straight into the reader the
HTTP layer parses, and encrypts writes straight onto the socket's transport. The handshake,
certificate and host-name checks are OpenSSL's, as configured by the ``SSLContext``.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import cast

__all__ = ["StreamConnection"]

_RECORD_READ = 1 << 16
"""The most one ``SSLObject.read`` returns (a TLS record holds at most 16 KiB)."""


class StreamConnection(asyncio.Protocol):
    """The protocol of one connection: bytes read go to ``reader``, decrypted when a TLS
    ``context`` is given (``server_hostname``: the name the certificate must carry);
    :meth:`write` and :meth:`drain` send. Await :meth:`handshake` before either."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        context: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
    ) -> None:
        self.reader = reader
        self._incoming: ssl.MemoryBIO | None = None
        self._outgoing: ssl.MemoryBIO | None = None
        self._tls: ssl.SSLObject | None = None
        if context is not None:
            self._incoming, self._outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
            self._tls = context.wrap_bio(
                self._incoming, self._outgoing, server_hostname=server_hostname
            )
        self._transport: asyncio.Transport | None = None
        self._handshake: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._paused = False
        self._drained: asyncio.Future[None] | None = None
        self._lost = False

    # -- asyncio.Protocol ----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A socket's transport (uvloop's does not subclass asyncio's classes).
        self._transport = cast("asyncio.Transport", transport)
        self.reader.set_transport(self._transport)  # it pauses the socket when it is full
        if self._tls is None:
            self._handshake.set_result(None)
        else:
            self._handshake_step()

    def data_received(self, data: bytes) -> None:
        if self._tls is None:
            self.reader.feed_data(data)
            return
        assert self._incoming is not None
        self._incoming.write(data)
        if not self._handshake.done() and not self._handshake_step():
            return
        self._decrypt()

    def eof_received(self) -> bool:
        self.reader.feed_eof()  # a TLS peer that closed without a close_notify ends here too
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        if exc is None:
            self.reader.feed_eof()
        else:
            self.reader.set_exception(exc)
        if not self._handshake.done():
            self._handshake.set_exception(exc or ConnectionResetError("the connection closed"))
        self._wake_writer()

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        self._wake_writer()

    # -- TLS -----------------------------------------------------------------------------------

    def _handshake_step(self) -> bool:
        """One step of the client's handshake; whether it is complete."""
        assert self._tls is not None
        try:
            self._tls.do_handshake()
        except ssl.SSLWantReadError:
            self._flush()
            return False
        except ssl.SSLError as error:
            self._flush()
            self._handshake.set_exception(error)
            self.abort()
            return False
        self._flush()
        self._handshake.set_result(None)
        return True

    def _decrypt(self) -> None:
        assert self._tls is not None
        while True:
            try:
                data = self._tls.read(_RECORD_READ)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:  # the server's close_notify
                self.reader.feed_eof()
                break
            except ssl.SSLError as error:
                self.reader.set_exception(error)
                self.abort()
                return
            if not data:
                self.reader.feed_eof()
                break
            self.reader.feed_data(data)
        self._flush()  # anything the records read made OpenSSL answer

    def _flush(self) -> None:
        assert self._outgoing is not None
        data = self._outgoing.read()
        if data and self._transport is not None and not self._transport.is_closing():
            self._transport.write(data)

    # -- the connection's user -----------------------------------------------------------------

    async def handshake(self) -> None:
        """Wait until the connection carries data (TLS set up); raises ``ssl.SSLError`` for a
        failed handshake, ``OSError`` for a connection lost during it."""
        await self._handshake

    def write(self, data: bytes) -> None:
        if self._transport is None or self._lost:
            raise ConnectionResetError("the connection is closed")
        if self._tls is None:
            self._transport.write(data)
            return
        self._tls.write(data)
        self._flush()

    async def drain(self) -> None:
        """Wait while the socket's send buffer is over its high-water mark."""
        if self._lost:
            raise ConnectionResetError("the connection is closed")
        if not self._paused:
            return
        self._drained = asyncio.get_running_loop().create_future()
        await self._drained
        if self._lost:
            raise ConnectionResetError("the connection is closed")

    def _wake_writer(self) -> None:
        waiter, self._drained = self._drained, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def is_closing(self) -> bool:
        return self._lost or self._transport is None or self._transport.is_closing()

    def abort(self) -> None:
        """Close at once: no close_notify, nothing waits on the peer."""
        if self._transport is not None:
            self._transport.abort()
