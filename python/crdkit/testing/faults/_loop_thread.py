"""An event loop in a daemon thread, for the fault proxies: callers in any thread (and any
other event loop) submit coroutines to it and wait for their results."""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Coroutine

__all__ = ["LoopThread"]

T = TypeVar("T")
CALL_TIMEOUT = 30.0


class LoopThread:
    """Runs ``loop`` until :meth:`stop`, then ends it as ``asyncio.run`` ends its loop."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self._finish()

    def _finish(self) -> None:
        # Tasks made in the loop's last pass have not taken their first step. One of them may
        # be the loop's own set-up of a connection accepted just before the stop: cancelled
        # before it runs, it never closes the socket it was given, which is left for the GC
        # to warn of. One more pass starts them, so a cancel reaches code that cleans up.
        self.loop.run_until_complete(asyncio.sleep(0))
        # Then as asyncio.run: what is still running (a relayed watch) is cancelled and
        # awaited, and the callbacks a close schedules (a transport's connection_lost, which
        # closes its socket) get their turn.
        pending = asyncio.all_tasks(self.loop)
        for task in pending:
            task.cancel()
        self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self.loop.run_until_complete(asyncio.sleep(0))
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """The coroutine's result, once the loop has run it (at most ``CALL_TIMEOUT``)."""
        if threading.current_thread() is self._thread:
            coroutine.close()
            raise RuntimeError("a fault proxy cannot be driven from its own event loop")
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(CALL_TIMEOUT)

    def stop(self) -> None:
        """Stops the loop, ends it and waits for the thread (at most ``CALL_TIMEOUT``)."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.join()

    def join(self) -> None:
        """Waits (at most ``CALL_TIMEOUT``) for the thread to end, once its loop was stopped."""
        self._thread.join(CALL_TIMEOUT)
