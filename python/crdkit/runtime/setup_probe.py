"""What a reconciler's ``setup`` attaches, found without a cluster, for ``crdkit gen-rbac``.

A reconciler's class declares its kinds (``resource``, ``owns``, ``watches``, ``runnables``),
but ``setup(manager)`` may wire more: a ``ClusterMirror`` attached there watches every Node
and Pod, a Runnable added there binds pods. RBAC written from the declarations alone would
lack those rights, and the operator would stop at start with a 403. So gen-rbac runs
``setup`` as ``crdkit run`` would, on a Manager whose client answers no request (nothing is
started: informers are only created, never listed), and reads back the informers and
runnables it asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crdkit.client.errors import ApiError

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager

    from crdkit.client.transport import ChunkStream
    from crdkit.resources import GroupVersionKind, KubernetesObject
    from crdkit.runtime.reconciler import Reconciler
    from crdkit.runtime.runnable import Runnable

__all__ = ["AttachedInformer", "SetupAttachments", "probe_setup"]


@dataclass(frozen=True)
class AttachedInformer:
    """One informer the controller (or its ``setup``) asked the manager for."""

    resource: type[KubernetesObject] | GroupVersionKind
    namespaced_watch: bool  # limited to one namespace (so a Role can grant it)
    metadata_only: bool


@dataclass(frozen=True)
class SetupAttachments:
    """Everything :meth:`Manager.add` wired for one reconciler, ``setup`` included."""

    informers: tuple[AttachedInformer, ...]
    runnables: tuple[type[Runnable], ...]


class _Offline:
    """An ``ApiTransport`` that answers nothing: ``setup`` may build clients and informers,
    but a probe that sends a request is a bug worth a clear error, not a hang."""

    @property
    def is_open(self) -> bool:
        return False

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def request(self, method: str, path: str, **_: Any) -> bytes:
        raise ApiError(
            f"{method} {path}: the reconciler's setup() sent a request while crdkit gen-rbac "
            "read what it attaches; setup must only wire informers, handlers and runnables",
            code=503,
        )

    def stream(self, method: str, path: str, **_: Any) -> AbstractAsyncContextManager[ChunkStream]:
        raise ApiError(f"{method} {path}: no cluster while reading setup()", code=503)


def probe_setup(reconciler: Reconciler[Any], *, namespace: str | None = None) -> SetupAttachments:
    """Add ``reconciler`` to an offline Manager (watching ``namespace``, as ``crdkit run
    --namespace`` would) and report what it wired."""
    from crdkit.runtime.reconciler import Reconciler

    if type(reconciler).setup is Reconciler.setup:
        # No setup of its own: what a manager wires for it is its declarations (kind, owns,
        # watches, runnables), which gen-rbac reads directly, so no manager (and no HTTP
        # stack) is needed to learn it.
        return SetupAttachments((), ())
    # Imported here: gen-rbac reads declarations without the HTTP stack unless it probes.
    from prometheus_client import CollectorRegistry

    from crdkit.client import Client, ClientConfig
    from crdkit.runtime.manager import Manager
    from crdkit.runtime.runnable import Runnable

    client = Client(ClientConfig("https://gen-rbac.invalid"), transport=_Offline())
    manager = Manager(
        client,
        namespace=namespace,
        metrics_bind_address="0",
        health_probe_bind_address="0",
        registry=CollectorRegistry(),  # the probe's metrics must not meet the process's
    )
    manager.add(reconciler)
    informers = tuple(
        AttachedInformer(key.resource, key.namespace is not None, key.metadata_only)
        for key in manager.informers.informers
    )
    runnables = tuple(dict.fromkeys(type(r) for r in manager.runnables if isinstance(r, Runnable)))
    return SetupAttachments(informers, runnables)
