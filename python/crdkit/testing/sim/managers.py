"""``virtual_clock_manager``: a ``Manager`` to run in a test on FakeCluster and a virtual clock.

No HTTP servers (no ports to collide), a metrics registry of its own (managers of one test, or
of consecutive ones, never share metric families), and the running loop's clock for its Leases,
so that ``run_on_virtual_clock`` drives their timings too::

    async def scenario() -> None:
        async with FakeCluster().client() as client:
            manager = virtual_clock_manager(client, namespace="ns", sharding=True, shard_id="a")
            manager.add(MyReconciler())
            ...

    run_on_virtual_clock(scenario())
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry

from crdkit.runtime.manager import Manager

if TYPE_CHECKING:
    from crdkit.client import Client

__all__ = ["virtual_clock_manager"]


def virtual_clock_manager(client: Client, **options: Any) -> Manager:
    """A Manager on ``client`` with ``options`` (the Manager's keyword shorthand), and no
    metrics or probe server, its own registry and the running loop's clock unless given."""
    settings: dict[str, Any] = {
        "metrics_bind_address": "0",
        "health_probe_bind_address": "0",
        **options,
    }
    registry = settings.pop("registry", None) or CollectorRegistry()
    clock = settings.pop("clock", None) or asyncio.get_running_loop().time
    return Manager(client, registry=registry, clock=clock, **settings)
