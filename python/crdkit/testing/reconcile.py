"""Unit-testing a ``Reconciler`` without a control plane: one reconcile, called directly.

::

    cluster = FakeCluster([hello], kinds=[Hello])           # crdkit.testing
    async with cluster.client() as client:
        await reconcile_once(HelloReconciler(), client, "world", namespace="ns")
        cm = await client.get(ConfigMap, "world-greeting", namespace="ns")

The ``Context`` is the one a controller builds: the same client, a cache over shared informers
on that client (so ``ctx.cache`` reads sync from the fake cluster too), an event recorder and a
reconcile logger named as the controller's. What a controller adds around ``reconcile`` is not
done here: no work queue, no retries on errors, no finalizer bookkeeping (``finalize`` is
not called); run a ``Manager`` on the fake cluster's client to test those.

It is the test kit's, beside :class:`~crdkit.testing.FakeCluster`, and works on any client:
the fake cluster's, or one for a real control plane.
"""

from __future__ import annotations

import logging
import uuid
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from crdkit.resources import KubernetesObject, resource_info
from crdkit.runtime.cache import CacheReader
from crdkit.runtime.context import Context
from crdkit.runtime.events import EventRecorder
from crdkit.runtime.factory import SharedInformerFactory
from crdkit.runtime.logs import ReconcileLogger
from crdkit.runtime.result import Request

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from crdkit.client import Client
    from crdkit.runtime.reconciler import Reconciler
    from crdkit.runtime.result import Result

__all__ = ["reconcile_context", "reconcile_once"]

T = TypeVar("T", bound=KubernetesObject)


@asynccontextmanager
async def reconcile_context(
    reconciler: Reconciler[Any],
    client: Client,
    obj: KubernetesObject,
    *,
    identity: str = "unit-test",
    cache_sync_timeout: float = 30.0,
) -> AsyncIterator[Context]:
    """The ``Context`` a controller of ``reconciler`` would pass when reconciling ``obj``.

    The informers behind ``ctx.cache`` start on first read and stop when the block ends.
    """
    name = reconciler.controller_name()
    info = resource_info(reconciler.primary_kind())
    if not isinstance(obj, reconciler.primary_kind()):
        raise TypeError(
            f"obj: {type(reconciler).__qualname__} reconciles {info.kind}, got "
            f"{type(obj).__qualname__}"
        )
    request = Request(obj.metadata.namespace, obj.metadata.name or "")
    reconcile_id = str(uuid.uuid4())
    fields = {
        "controller": name,
        "namespace": request.namespace,
        "name": request.name,
        "reconcileID": reconcile_id,
    }
    informers = SharedInformerFactory(client)
    try:
        yield Context(
            client=client,
            request=request,
            controller=name,
            reconcile_id=reconcile_id,
            log=ReconcileLogger(logging.getLogger(f"crdkit.controller.{name}"), fields),
            field_manager=name,
            recorder=EventRecorder(
                client,
                reporting_controller=f"{info.group or 'crdkit.io'}/{name}",
                reporting_instance=identity,
            ),
            cache=CacheReader(informers, sync_timeout=cache_sync_timeout),
            obj=obj,
        )
    finally:
        await informers.stop()


async def reconcile_once(
    reconciler: Reconciler[T],
    client: Client,
    name: str,
    *,
    namespace: str | None = None,
) -> Result | None:
    """Read the primary object ``name`` as it is now and run ``reconciler.reconcile`` on it
    once; its result (or exception) is returned (or raised) as is."""
    kind = reconciler.primary_kind()
    obj: Any = await client.get(kind, name, namespace=namespace)
    async with reconcile_context(reconciler, client, obj) as ctx:
        return await reconciler.reconcile(ctx, obj)
