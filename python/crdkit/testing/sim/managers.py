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

``running_manager`` runs such a Manager for the length of a block, on a virtual clock or not::

    async with running_manager(client, scheduler, reconcilers=[MyReconciler()]) as manager:
        ...  # every cache synced; on exit the Manager stops and what it failed with is raised
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry

from crdkit.runtime.manager import Manager

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

    from crdkit.client import Client
    from crdkit.runtime.reconciler import Reconciler
    from crdkit.runtime.runnable import Runnable

__all__ = ["running_manager", "virtual_clock_manager"]


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


@contextlib.asynccontextmanager
async def running_manager(
    client: Client,
    *runnables: Runnable,
    reconcilers: Sequence[Reconciler[Any]] = (),
    stop_timeout: float = 60.0,
    **options: Any,
) -> AsyncIterator[Manager]:
    """A `virtual_clock_manager` running ``runnables`` and ``reconcilers``, ready on entry.

    On exit the Manager is stopped and its run awaited (at most ``stop_timeout`` seconds), so a
    runnable that failed fails the test or bench that ran it instead of being left behind in a
    task nobody awaits.
    """
    manager = virtual_clock_manager(client, **options)
    for reconciler in reconcilers:
        manager.add(reconciler)
    for runnable in runnables:
        manager.add_runnable(runnable)
    task = asyncio.create_task(manager.run())
    try:
        await manager.wait_ready()
        yield manager
    finally:
        manager.stop()
        await asyncio.wait_for(task, stop_timeout)
