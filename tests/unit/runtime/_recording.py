"""What the runtime's virtual-clock tests share: a reconciler that records when it reconciled
what, and a Manager on NS with no ports and a metrics registry of its own."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry

from crdkit.client import object_key
from crdkit.resources import ConfigMap
from crdkit.runtime import Context, Manager, Reconciler

if TYPE_CHECKING:
    from crdkit.client import Client

NS = "ns"


class Recorder(Reconciler[ConfigMap]):
    """Records ``(loop time, key)`` of each reconcile, which takes ``work_s`` (virtual) seconds."""

    def __init__(self, work_s: float = 0.0) -> None:
        self.work_s = work_s
        self.at: list[tuple[float, str]] = []

    @property
    def order(self) -> list[str]:
        return [key for _, key in self.at]

    async def reconcile(self, ctx: Context, obj: ConfigMap) -> None:
        self.at.append((asyncio.get_running_loop().time(), object_key(obj)))
        if self.work_s:
            await asyncio.sleep(self.work_s)


def recording_manager(client: Client, recorder: Recorder, **options: Any) -> Manager:
    """A Manager on NS running ``recorder``: no ports, a registry of its own."""
    manager = Manager(
        client,
        namespace=NS,
        metrics_bind_address="0",
        health_probe_bind_address="0",
        registry=CollectorRegistry(),
        **options,
    )
    manager.add(recorder)
    return manager
