"""The hello example end to end on the local control plane, through a real Manager."""

from __future__ import annotations

from collections.abc import Awaitable

import pytest
from _live import create_hello
from _runtime_support import HELLO_CRD, eventually, http_get, new_manager, running
from examples.hello.operator import Hello, HelloReconciler

from _hello import controller_of, hello_greeted
from crdkit.client import Client, NotFound
from crdkit.resources import ConfigMap
from crdkit.testing import ControlPlane

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


async def test_hello_end_to_end_and_owned_configmap_recreated(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str
) -> None:
    await control_plane.install_crds([HELLO_CRD])
    client = crdkit_client
    manager = new_manager(client, namespace)
    async with running(manager, HelloReconciler()):
        hello = await create_hello(client, namespace, "world")

        def greeted(message: str) -> Awaitable[bool]:
            return hello_greeted(client, namespace, message, generation_observed=True)

        await eventually(lambda: greeted("Hello, world!"), what="ConfigMap and Ready status")
        cm = await client.get(ConfigMap, "world-greeting", namespace=namespace)
        assert controller_of(cm) == ("Hello", "world", hello.metadata.uid, True)

        # Deleting the owned ConfigMap reconciles its owner, which recreates it.
        await client.delete(ConfigMap, "world-greeting", namespace=namespace)

        async def recreated() -> bool:
            try:
                again = await client.get(ConfigMap, "world-greeting", namespace=namespace)
            except NotFound:
                return False
            return again.metadata.uid != cm.metadata.uid

        await eventually(recreated, what="ConfigMap recreated")

        # A spec change flows through to the child.
        await client.patch(Hello, "world", {"spec": {"greeting": "Bonjour"}}, namespace=namespace)
        await eventually(lambda: greeted("Bonjour, world!"), what="greeting updated")

        # Probes and metrics are served while running.
        assert manager.probe_port is not None
        assert manager.metrics_port is not None
        assert await http_get(manager.probe_port, "/healthz") == (200, "ok\n")
        assert await http_get(manager.probe_port, "/readyz") == (200, "ok\n")
        status, metrics = await http_get(manager.metrics_port, "/metrics")
        assert status == 200
        for name in (
            'controller_runtime_reconcile_total{controller="hello",result="success"}',
            'controller_runtime_reconcile_time_seconds_count{controller="hello"}',
            'controller_runtime_max_concurrent_reconciles{controller="hello"} 1.0',
            'controller_runtime_active_workers{controller="hello"}',
            'workqueue_depth{controller="hello",name="hello"}',
            'workqueue_adds_total{controller="hello",name="hello"}',
            'workqueue_queue_duration_seconds_bucket{controller="hello"',
            'workqueue_work_duration_seconds_count{controller="hello",name="hello"}',
            'workqueue_retries_total{controller="hello",name="hello"}',
            'workqueue_unfinished_work_seconds{controller="hello",name="hello"}',
            'workqueue_longest_running_processor_seconds{controller="hello",name="hello"}',
        ):
            assert name in metrics, f"{name} missing from /metrics"
    assert not manager.ready
