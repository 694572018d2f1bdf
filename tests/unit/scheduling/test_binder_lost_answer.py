"""``Binder`` when a call's answer is lost (the connection broke after the server applied it):
the pod is there, so the call counts as made; before, the gang was rolled back around it and
that pod was left behind (found by the training_job crash tests, lost-response on a create)."""

from __future__ import annotations

from typing import Any

import pytest

import factories
from crdkit.client import Client, TransportError
from crdkit.resources import Pod
from crdkit.scheduling import Binder, BindError, ClusterMirror
from crdkit.scheduling.assumptions import PodBinding
from crdkit.testing import FakeCluster, run_on_virtual_clock
from crdkit.testing.crashes import CrashCase, CrashTransport, WriteLog
from factories import node


def _bindings() -> list[PodBinding]:
    return [PodBinding("ns", name, "n1", {"nvidia.com/gpu": 1000}) for name in ("m0", "w0")]


async def _create(case: str, target: str) -> tuple[list[str], BindError | None]:
    cluster = FakeCluster()
    mirror = ClusterMirror(["rack"])
    mirror.set_node(node("n1", "r1"))
    transport = CrashTransport(
        cluster.client().transport,
        WriteLog(),
        case=CrashCase.parse(case),
        target=("create", "pods", "ns", target, 1),
    )
    async with Client(cluster.client().config, transport=transport) as client:
        binder = Binder(client, mirror)
        pods = {b.key: factories.pod(b.name, gpus=1, namespace="ns") for b in _bindings()}
        error: BindError | None = None
        try:
            await binder.create_bound(binder.reserve(_bindings()), pods)
        except BindError as raised:
            error = raised
    async with cluster.client() as observer:
        listed = await observer.list(Pod, namespace="ns")
    return sorted(p.metadata.name or "" for p in listed.items), error


@pytest.mark.parametrize("target", ["m0", "w0"])
def test_a_create_applied_but_unanswered_counts_as_made(target: str) -> None:
    names, error = run_on_virtual_clock(_create("lost-response:1", target))
    assert error is None
    assert names == ["m0", "w0"]


class _Refused(CrashTransport):
    """Fails the create of ``w0`` as a broken connection would, without sending it."""

    async def request(self, method: str, path: str, **kwargs: Any) -> bytes:
        if method == "POST" and b'"name":"w0"' in (kwargs.get("body") or b"").replace(b" ", b""):
            raise TransportError(f"{method} {path}: connection refused (test)")
        return await super().request(method, path, **kwargs)


def test_a_create_that_never_reached_the_server_still_rolls_the_gang_back() -> None:
    async def main() -> tuple[list[str], BindError | None]:
        cluster = FakeCluster()
        mirror = ClusterMirror(["rack"])
        mirror.set_node(node("n1", "r1"))
        transport = _Refused(cluster.client().transport, WriteLog())
        async with Client(cluster.client().config, transport=transport) as client:
            binder = Binder(client, mirror)
            pods = {b.key: factories.pod(b.name, gpus=1, namespace="ns") for b in _bindings()}
            error: BindError | None = None
            try:
                await binder.create_bound(binder.reserve(_bindings()), pods)
            except BindError as raised:
                error = raised
        async with cluster.client() as observer:
            listed = await observer.list(Pod, namespace="ns")
        return sorted(p.metadata.name or "" for p in listed.items), error

    names, error = run_on_virtual_clock(main())
    assert error is not None
    assert list(error.failures) == ["ns/w0"]
    assert names == []  # m0 was made and rolled back; w0 never was
