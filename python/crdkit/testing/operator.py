"""``OperatorRunner``: reconcilers running in a real ``Manager`` for the length of a test.

It is what the ``operator`` fixture gives (``crdkit.testing.pytest_plugin``)::

    async def test_hello(operator, crdkit_client, namespace):
        await operator.start(HelloReconciler, namespace=namespace)   # caches synced
        ...                                                           # create, eventually(...)
        await operator.restart()                  # a new Manager, as after a pod restart
        await operator.restart(graceful=False)    # as after a crash: no drain, Lease not released

Each start builds a new ``Manager`` on the given client, on free loopback ports and with a
metrics registry of its own (so restarts never collide), and returns once every cache has
synced. Reconciler classes are instantiated anew on every start, as a restarted process would;
instances are reused. A manager that fails is reported by the next ``start``, ``restart`` or
``stop`` (and so by the fixture's teardown), never swallowed.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry

from crdkit.runtime.manager import Manager
from crdkit.runtime.reconciler import Reconciler

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crdkit.client import Client
    from crdkit.runtime.runnable import Runnable

__all__ = ["OperatorRunner"]

ReconcilerSpec = Reconciler[Any] | type[Reconciler[Any]]


class OperatorRunner:
    """Start, restart and stop reconcilers in a ``Manager`` on ``client``."""

    def __init__(self, client: Client, *, stop_timeout: float = 60.0) -> None:
        self.client = client
        self.stop_timeout = stop_timeout
        self.manager: Manager | None = None
        self._task: asyncio.Task[None] | None = None
        self._reconcilers: tuple[ReconcilerSpec, ...] = ()
        self._runnables: tuple[Runnable, ...] = ()
        self._options: dict[str, Any] = {}
        self.starts = 0

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(
        self,
        *reconcilers: ReconcilerSpec,
        runnables: Sequence[Runnable] = (),
        **manager_options: Any,
    ) -> Manager:
        """Run ``reconcilers`` (classes or instances) and ``runnables`` in a new Manager built
        with ``manager_options`` (``namespace=``, ``leader_election=``, ...); return it once
        ready."""
        if self.running:
            raise RuntimeError("the operator is running already: restart() or stop() it first")
        if not reconcilers and not runnables:
            raise ValueError("start() needs at least one reconciler or runnable")
        self._reconcilers = reconcilers
        self._runnables = tuple(runnables)
        self._options = manager_options
        return await self._launch()

    async def restart(self, *, graceful: bool = True) -> Manager:
        """Stop the running Manager (``graceful=False``: cancel it, as a crash would) and start
        a new one with the same reconcilers and options."""
        if not self._reconcilers and not self._runnables:
            raise RuntimeError("restart() before start()")
        await self._halt(graceful=graceful)
        return await self._launch()

    async def stop(self, *, graceful: bool = True) -> None:
        """Stop the Manager, if any; raises what it failed with."""
        await self._halt(graceful=graceful)

    async def _launch(self) -> Manager:
        options = {
            "metrics_bind_address": "127.0.0.1:0",
            "health_probe_bind_address": "127.0.0.1:0",
            "registry": CollectorRegistry(),
            **self._options,
        }
        manager = Manager(self.client, **options)
        for spec in self._reconcilers:
            manager.add(spec() if isinstance(spec, type) else spec)
        for runnable in self._runnables:
            manager.add_runnable(runnable)
        self.manager = manager
        self._task = asyncio.create_task(manager.run(), name=f"operator-run-{self.starts}")
        self.starts += 1
        try:
            await manager.wait_ready()
        except RuntimeError:
            await self._task  # its own error says more than "ended before it was ready"
            raise
        return manager

    async def _halt(self, *, graceful: bool) -> None:
        task, manager = self._task, self.manager
        self._task = None
        if task is None or manager is None:
            return
        if task.done():
            task.result()  # a failure before this stop
            return
        if graceful:
            manager.stop()
            await asyncio.wait_for(asyncio.shield(task), self.stop_timeout)
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
