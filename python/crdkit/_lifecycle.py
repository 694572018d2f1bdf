"""`async with` for the objects that start and stop: informers, their factory, a control plane,
a client; and `with` as well for those whose start and stop block (the fault proxies)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["BlockingStartStop", "StartStop"]


class StartStop:
    """``async with thing:`` starts it and stops it on the way out, whatever happened inside.

    A subclass defines ``start`` and ``stop``; this only spells the context manager once.
    """

    async def start(self) -> None:
        raise NotImplementedError

    async def stop(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


class BlockingStartStop:
    """``with thing:`` and ``async with thing:`` for a thing whose ``start`` and ``stop`` block
    (it drives its own thread): ``async with`` runs them in a worker thread, so the event
    loop of the test keeps going meanwhile. It stops on the way out, whatever happened inside.

    A subclass defines ``start`` and ``stop``; this only spells both context managers once.
    """

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        await asyncio.to_thread(self.start)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await asyncio.to_thread(self.stop)
