"""Which event loop a crdkit process runs on (``crdkit run``, ``crdkit scheduler``).

``asyncio`` (the default) is asyncio's own loop; ``uvloop`` (``pip install 'crdkit[fast]'``)
is opt-in: on the runtime bench its gain was within the noise (docs/performance.md), and it is
refused with webhooks, whose server does not answer kube-apiserver under it
(``crdkit.runtime.cli_common``).
"""

from __future__ import annotations

import asyncio
import importlib.util
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

__all__ = ["EVENT_LOOPS", "EventLoop", "loop_factory", "run"]

EventLoop = Literal["asyncio", "uvloop"]
EVENT_LOOPS: tuple[EventLoop, ...] = ("asyncio", "uvloop")
T = TypeVar("T")


def loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """What `asyncio.Runner` builds its loop with (None: asyncio's own); ``ValueError``
    naming the option for a choice not in `EVENT_LOOPS`, or uvloop when it is not installed."""
    if choice not in EVENT_LOOPS:
        raise ValueError(f"--event-loop: expected one of {', '.join(EVENT_LOOPS)}, got {choice!r}")
    if choice == "asyncio":
        return None
    if importlib.util.find_spec("uvloop") is None:
        raise ValueError(
            "--event-loop uvloop: uvloop is not installed (pip install 'crdkit[fast]')"
        )
    import uvloop  # imported only when chosen: it is an optional dependency

    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run(main: Coroutine[Any, Any, T], choice: str = "asyncio") -> T:
    """`asyncio.run` on the loop ``choice`` names."""
    factory = loop_factory(choice)
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
