"""No write is lost under a storm of 5xx answers: the hello operator, through a proxy that
fails half its writes (500 and 503, some with ``Retry-After``) and a third of its watches,
still gives every Hello its ConfigMap and a status for its latest generation."""

from __future__ import annotations

import pytest
from _runtime_support import HELLO_CRD, eventually, new_manager, running
from examples.hello.operator import Hello, HelloReconciler, HelloSpec

from crdkit.client import Client, NotFound
from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.runtime import Request
from crdkit.runtime.ratelimit import (
    ItemExponentialRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    TokenBucketRateLimiter,
)
from crdkit.testing import ControlPlane, HttpFaultProxy

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

WRITES = ["POST", "PUT", "PATCH", "DELETE"]
NAMES = [f"h{i}" for i in range(6)]


class StormHello(HelloReconciler):
    """The hello operator with its retries capped at 2 s: most of its writes fail here, and
    client-go's default backoff (doubling to 1000 s) would push an unlucky object's next
    try past the test's window after a dozen failures in a row."""

    def rate_limiter(self) -> RateLimiter[Request]:
        return MaxOfRateLimiter(
            ItemExponentialRateLimiter(0.005, 2.0), TokenBucketRateLimiter(10.0, 100)
        )


async def all_greeted(client: Client, namespace: str, target: str) -> bool:
    for name in NAMES:
        try:
            cm = await client.get(ConfigMap, f"{name}-greeting", namespace=namespace)
        except NotFound:
            return False
        hello = await client.get(Hello, name, namespace=namespace)
        if cm.data.get("message") != f"Hello, {target}!":
            return False
        if hello.status is None or hello.status.observed_generation != hello.metadata.generation:
            return False
    return True


async def test_writes_survive_a_5xx_storm(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str
) -> None:
    await control_plane.install_crds([HELLO_CRD])
    for name in NAMES:
        meta = ObjectMeta(name=name, namespace=namespace)
        await crdkit_client.create(Hello(metadata=meta, spec=HelloSpec(target="a")))
    async with (
        HttpFaultProxy.for_control_plane(control_plane) as proxy,
        Client(proxy.client_config()) as client,
    ):
        # Seeded, so a failure reproduces. Retry-After makes the client itself retry some;
        # the others fail the reconcile, which is requeued with backoff and tries again.
        retried = proxy.fail(503, retry_after=0.2, methods=WRITES, probability=0.2, seed=1)
        failed_500 = proxy.fail(500, methods=WRITES, probability=0.3, seed=2)
        failed_503 = proxy.fail(503, methods=WRITES, probability=0.3, seed=3)
        watches = proxy.fail(503, watch=True, probability=0.3, seed=4)
        manager = new_manager(client, namespace)
        async with running(manager, StormHello()):
            await eventually(lambda: all_greeted(crdkit_client, namespace, "a"), within=90)
            # New generations written while the storm goes on must land too.
            for name in NAMES:
                await crdkit_client.patch(
                    Hello, name, {"spec": {"target": "b"}}, namespace=namespace
                )
            await eventually(lambda: all_greeted(crdkit_client, namespace, "b"), within=90)
        writes = [r for r in proxy.requests(watch=False) if r.method in WRITES]
    assert retried.hits > 0
    assert failed_500.hits + failed_503.hits > 0
    assert watches.hits > 0
    failed = [r for r in writes if r.injected]
    assert failed, "the storm never hit a write"
    assert any(r.status is not None and r.status < 300 for r in writes)
