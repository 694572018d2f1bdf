"""`async with` for the objects that start and stop: informers, their factory, a control plane."""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["StartStop"]


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
