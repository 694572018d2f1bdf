"""The ``operator`` fixture: the hello operator run, restarted (gracefully and as after a crash)
and stopped by the fixture, on the real apiserver."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

import pytest
from _runtime_support import HELLO_CRD
from examples.hello.operator import Hello, HelloReconciler, HelloSpec

from _hello import hello_greeted
from crdkit.client import Client
from crdkit.resources import ObjectMeta
from crdkit.runtime import Manager, Runnable
from crdkit.testing import ControlPlane, eventually
from crdkit.testing.operator import OperatorRunner

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def greeted(client: Client, namespace: str, name: str, message: str) -> Awaitable[bool]:
    return hello_greeted(client, namespace, message, name=name)


async def hello(client: Client, namespace: str, name: str) -> None:
    await client.create(
        Hello(metadata=ObjectMeta(name=name, namespace=namespace), spec=HelloSpec(target=name))
    )


async def test_the_operator_runs_and_survives_restarts(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str, operator: OperatorRunner
) -> None:
    await control_plane.install_crds([HELLO_CRD])
    first = await operator.start(HelloReconciler, namespace=namespace)
    assert first.ready
    await hello(crdkit_client, namespace, "a")
    await eventually(lambda: greeted(crdkit_client, namespace, "a", "Hello, a!"), what="a")

    second = await operator.restart()
    assert second is not first
    assert second.ready
    assert not first.ready
    await hello(crdkit_client, namespace, "b")
    await eventually(lambda: greeted(crdkit_client, namespace, "b", "Hello, b!"), what="b")

    # as after a crash: the old manager is cancelled, not drained
    third = await operator.restart(graceful=False)
    await crdkit_client.patch(Hello, "a", {"spec": {"greeting": "Hi"}}, namespace=namespace)
    await eventually(lambda: greeted(crdkit_client, namespace, "a", "Hi, a!"), what="a again")
    assert third.ready
    assert operator.starts == 3


class Failing(Runnable):
    """Fails once it is told to, as a runnable with a bug would."""

    def __init__(self) -> None:
        self.go = asyncio.Event()

    async def run(self, manager: Manager) -> None:
        await self.go.wait()
        raise ValueError("the runnable broke")


async def test_a_manager_that_fails_fails_the_stop(crdkit_client: Client, namespace: str) -> None:
    runner = OperatorRunner(crdkit_client)
    failing = Failing()
    manager = await runner.start(HelloReconciler, runnables=[failing], namespace=namespace)
    failing.go.set()
    await eventually(lambda: asyncio.sleep(0, not manager.ready), what="the manager stopping")
    with pytest.raises(ValueError, match="the runnable broke"):
        await runner.stop()
    assert not runner.running


async def test_misuse_is_refused(crdkit_client: Client) -> None:
    runner = OperatorRunner(crdkit_client)
    with pytest.raises(RuntimeError, match="restart\\(\\) before start\\(\\)"):
        await runner.restart()
    with pytest.raises(ValueError, match="at least one reconciler"):
        await runner.start()
    await runner.stop()  # nothing running: nothing to do
