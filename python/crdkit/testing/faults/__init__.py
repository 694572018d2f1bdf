"""Network faults between a client and the apiserver, on demand: ``TcpFaultProxy`` blackholes,
drops, refuses, resets or delays connections; ``HttpFaultProxy`` answers chosen requests with
429 or 5xx, cuts watches and records what it saw (``RecordedRequest``)."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

# aiohttp is the `testing` extra's, not a dependency of crdkit: an operator never loads it.
# Checked here, where the package is first imported, so whichever name is asked for says what
# to install; the spec is looked up, not imported, to keep the package itself lazy.
if importlib.util.find_spec("aiohttp") is None:
    raise ImportError(
        "crdkit.testing.faults needs aiohttp, which is not installed: "
        "pip install 'crdkit[testing]'",
        name="aiohttp",
    )

if TYPE_CHECKING:
    from crdkit.testing.faults.proxies import FaultMode as FaultMode
    from crdkit.testing.faults.proxies import HttpFaultProxy as HttpFaultProxy
    from crdkit.testing.faults.proxies import InjectedFault as InjectedFault
    from crdkit.testing.faults.proxies import RecordedRequest as RecordedRequest
    from crdkit.testing.faults.proxies import TcpFaultProxy as TcpFaultProxy

__getattr__, __dir__ = lazy_namespace(__name__, globals())
