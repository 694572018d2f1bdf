"""Network faults between a client and the apiserver, on demand: ``TcpFaultProxy`` blackholes,
drops, refuses, resets or delays connections; ``HttpFaultProxy`` answers chosen requests with
429 or 5xx, cuts watches and records what it saw (``RecordedRequest``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit.testing.faults.proxies import (
        FaultMode,
        HttpFaultProxy,
        InjectedFault,
        RecordedRequest,
        TcpFaultProxy,
    )

_HOMES = {
    "crdkit.testing.faults.proxies": (
        "FaultMode",
        "HttpFaultProxy",
        "InjectedFault",
        "RecordedRequest",
        "TcpFaultProxy",
    ),
}
__getattr__, __dir__ = lazy_namespace(__name__, globals(), _HOMES)

__all__ = [
    "FaultMode",
    "HttpFaultProxy",
    "InjectedFault",
    "RecordedRequest",
    "TcpFaultProxy",
]
