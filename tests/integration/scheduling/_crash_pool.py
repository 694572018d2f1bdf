"""Where the scheduling crash tests run: a namespace of its own for each run, on one pool of
simulated nodes that every run of a test shares.

Nodes are cluster-scoped, so they cannot come and go with a run's namespace; and a node's name
is written into every pod bound to it, so the runs must bind to the same nodes for their end
states to compare. A pool's nodes are made once per test (`make_nodes`), each run gets a new
namespace, and closing a run deletes what it left there (pods at once, with no grace: no
kubelet will ever end them) so that the next run finds the nodes empty.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterable
from typing import Any

from crdkit.client import Client, KubernetesError, NotFound
from crdkit.resources import Pod
from crdkit.testing import ControlPlane
from crdkit.testing.crashes.sites import CrashSite


class _PoolSite:
    def __init__(self, plane: ControlPlane, namespace: str, kinds: list[type[Any]]) -> None:
        self.plane = plane
        self.namespace = namespace
        self.kinds = kinds

    def client(self) -> Client:
        return Client.from_control_plane(self.plane)

    async def close(self) -> None:
        async with self.client() as client:
            for kind in [Pod, *self.kinds]:
                for obj in (await client.list(kind, namespace=self.namespace)).items:
                    with contextlib.suppress(NotFound):
                        await client.delete(
                            kind,
                            obj.metadata.name or "",
                            namespace=self.namespace,
                            grace_period_seconds=0 if kind is Pod else None,
                        )
            for _ in range(600):  # the pods gone: the next run starts on empty nodes
                if not (await client.list(Pod, namespace=self.namespace)).items:
                    break
                await asyncio.sleep(0.1)
        await self.plane.delete_namespace(self.namespace)


class PoolTarget:
    """A :class:`~crdkit.testing.crashes.sites.CrashTarget`: a new namespace ``<pool>-<hex>``
    for each run; closing a run deletes its pods and its objects of ``kinds``."""

    virtual_time = False

    def __init__(self, plane: ControlPlane, pool: str, kinds: list[type[Any]]) -> None:
        self.plane = plane
        self.pool = pool
        self.kinds = kinds

    async def site(self) -> CrashSite:
        namespace = f"{self.pool}-{uuid.uuid4().hex[:6]}"
        await self.plane.create_namespace(namespace)
        return _PoolSite(self.plane, namespace, self.kinds)


async def finish(client: Client, pods: Iterable[Pod]) -> bool:
    """What the kubelet reports when a job's containers exit 0, pod by pod, each patch bound to
    the pod's uid; False if a pod is gone (or its name holds another pod by now)."""
    for pod in pods:
        if pod.status is not None and pod.status.phase == "Succeeded":
            continue
        try:
            await client.patch(
                Pod,
                pod.metadata.name or "",
                {"metadata": {"uid": pod.metadata.uid}, "status": {"phase": "Succeeded"}},
                namespace=pod.metadata.namespace,
                subresource="status",
            )
        except KubernetesError:
            return False
    return True
