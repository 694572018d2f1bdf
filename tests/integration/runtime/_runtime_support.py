"""Helpers shared by the runtime's integration tests (imported by module name by pytest)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from examples.hello.operator import Hello, HelloSpec
from prometheus_client import CollectorRegistry

from crdkit.client import Client, object_key
from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.runtime import Informer, Manager, Reconciler
from crdkit.testing import ControlPlane, eventually

# Written by `crdkit gen-crd examples.hello.operator:Hello -o examples/hello`.
HELLO_CRD = Path(__file__).resolve().parents[3] / "examples/hello/hello.example.com_hellos.yaml"


async def three_hellos(control_plane: ControlPlane, client: Client, namespace: str) -> None:
    """Installs the Hello CRD and creates the Hellos h0, h1 and h2 in ``namespace``: work for
    the operators of the leader election tests to contend over."""
    await control_plane.install_crds([HELLO_CRD])
    for i in range(3):
        meta = ObjectMeta(name=f"h{i}", namespace=namespace)
        await client.create(Hello(metadata=meta, spec=HelloSpec(target="x")))


def configmap(namespace: str, name: str, value: str = "1") -> ConfigMap:
    return ConfigMap.model_validate(
        {
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": "x"}},
            "data": {"v": value},
        }
    )


class Recorder:
    """Collects what an informer's handlers saw, by key. ``changes_only`` leaves out the
    updates a resync replays (old and new at the same resourceVersion)."""

    def __init__(self, *, changes_only: bool = False) -> None:
        self.changes_only = changes_only
        self.added: list[str] = []
        self.updated: list[str] = []
        self.deleted: list[str] = []

    def on_add(self, obj: ConfigMap) -> None:
        self.added.append(object_key(obj))

    def on_update(self, old: ConfigMap, new: ConfigMap) -> None:
        if self.changes_only and old.metadata.resource_version == new.metadata.resource_version:
            return
        self.updated.append(object_key(new))

    def on_delete(self, obj: ConfigMap) -> None:
        self.deleted.append(object_key(obj))


async def store_matches_server(informer: Informer[ConfigMap], client: Client, ns: str) -> bool:
    """Whether the informer's store holds exactly the server's ConfigMaps, at their versions."""
    fresh = await client.list(ConfigMap, namespace=ns)
    server = {object_key(o): o.metadata.resource_version for o in fresh.items}
    cached = {object_key(o): o.metadata.resource_version for o in informer.store.list()}
    return server == cached


def new_manager(client: Client, namespace: str, **options: object) -> Manager:
    """A manager confined to ``namespace``, on free loopback ports, with its own registry."""
    settings: dict[str, object] = {
        "namespace": namespace,
        "metrics_bind_address": "127.0.0.1:0",
        "health_probe_bind_address": "127.0.0.1:0",
        "registry": CollectorRegistry(),
        **options,
    }
    return Manager(client, **settings)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def running(manager: Manager, *reconcilers: Reconciler[object]) -> AsyncIterator[Manager]:  # type: ignore[type-var]
    """Run ``manager`` with ``reconcilers`` in the background; stop it (gracefully) afterwards."""
    for reconciler in reconcilers:
        manager.add(reconciler)
    task = asyncio.create_task(manager.run())
    try:
        await eventually(lambda: _ready(manager, task), what="manager ready")
        yield manager
    finally:
        manager.stop()
        await asyncio.wait_for(task, 60)


async def _ready(manager: Manager, task: asyncio.Task[None]) -> bool:
    if task.done():
        task.result()  # surface the manager's error
        raise AssertionError("manager stopped before it was ready")
    return manager.ready and all(c.started for c in manager.controllers)


async def http_get(port: int, path: str) -> tuple[int, str]:
    """A plain HTTP GET against localhost: (status, body)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    await writer.wait_closed()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode()
