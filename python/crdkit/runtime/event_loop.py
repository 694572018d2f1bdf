"""Which event loop a crdkit process runs on (``crdkit run``, ``crdkit scheduler``).

``auto`` (the default) is uvloop when it is installed (``pip install 'crdkit[fast]'``) and the
process serves no webhooks, asyncio's own loop otherwise: on the runtime bench uvloop took
3-14 % less CPU per object than asyncio's loop in each run since the client speaks HTTP/1.1
itself (benches/RESULTS.md), and the webhook server does not answer kube-apiserver under it.
``asyncio`` and ``uvloop`` name one loop whatever is installed; ``uvloop`` with webhooks is
refused (``crdkit.runtime.cli_common``).
"""

from __future__ import annotations

import asyncio
import importlib.util
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

__all__ = ["EVENT_LOOPS", "EventLoop", "choose", "loop_factory", "run"]

EventLoop = Literal["auto", "asyncio", "uvloop"]
EVENT_LOOPS: tuple[EventLoop, ...] = ("auto", "asyncio", "uvloop")
T = TypeVar("T")


def choose(choice: str, *, serves_webhooks: bool = False) -> Literal["asyncio", "uvloop"]:
    """The loop ``choice`` names: for ``auto``, uvloop when it is installed and the process
    serves no webhooks, else asyncio's own. ``ValueError`` naming the option for a choice not
    in `EVENT_LOOPS`."""
    if choice not in EVENT_LOOPS:
        raise ValueError(f"--event-loop: expected one of {', '.join(EVENT_LOOPS)}, got {choice!r}")
    if choice == "asyncio" or choice == "uvloop":
        return choice
    if serves_webhooks or importlib.util.find_spec("uvloop") is None:
        return "asyncio"
    return "uvloop"


def loop_factory(
    choice: str, *, serves_webhooks: bool = False
) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """What `asyncio.Runner` builds its loop with (None: asyncio's own); ``ValueError``
    naming the option for a choice not in `EVENT_LOOPS`, or uvloop when it is not installed."""
    if choose(choice, serves_webhooks=serves_webhooks) == "asyncio":
        return None
    if importlib.util.find_spec("uvloop") is None:
        raise ValueError(
            "--event-loop uvloop: uvloop is not installed (pip install 'crdkit[fast]')"
        )
    import uvloop  # imported only when chosen: it is an optional dependency

    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run(main: Coroutine[Any, Any, T], choice: str = "auto", *, serves_webhooks: bool = False) -> T:
    """`asyncio.run` on the loop ``choice`` names (see `choose`)."""
    factory = loop_factory(choice, serves_webhooks=serves_webhooks)
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
