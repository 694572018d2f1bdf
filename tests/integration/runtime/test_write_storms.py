"""No write is lost under a storm of 5xx answers: the hello operator, through a proxy that
fails half its writes (500 and 503, some with ``Retry-After``) and a third of its watches,
still gives every Hello its ConfigMap and a status for its latest generation."""

from __future__ import annotations

from collections.abc import Hashable

import pytest
from _runtime_support import HELLO_CRD, eventually, new_manager, running
from examples.hello.operator import Hello, HelloReconciler, HelloSpec

from crdkit.client import Client, NotFound
from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.runtime.ratelimit import ItemExponentialRateLimiter
from crdkit.testing import ControlPlane, HttpFaultProxy

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

WRITES = ["POST", "PUT", "PATCH", "DELETE"]
NAMES = [f"h{i}" for i in range(6)]

BACKOFF_CAP = 0.5
"""The longest an object waits between two tries, in seconds. About three reconciles in four
fail here (each writes twice, and half the writes fail), so an object fails ten or more in a
row now and then. client-go's default backoff doubles on each failure (5 ms .. 1000 s): after
thirteen its next try comes 20 s later, after fifteen 80 s, past the window; and which object
draws the unlucky run depends on how the requests of all six interleave, that is on machine
speed. Capped, a failing object is tried at least every 0.5 s plus the time a try takes, so
some 100 tries or more per 90 s window, all of which would have to fail (0.75**100 ~ 3e-13).
With a 2 s cap, 5 of 15 runs here took over 30 s instead of 10: one object retried every
2 s for some 17 s."""


class RecordingBackoff(ItemExponentialRateLimiter):
    """client-go's per-object curve (5 ms, doubling) up to ``BACKOFF_CAP``, recording the
    delays it hands out. Per object only: client-go's overall token bucket is left out, since
    its delays grow with how many retries pile up at once, which is the load the cap is there
    to take out of the test."""

    def __init__(self) -> None:
        super().__init__(0.005, BACKOFF_CAP)
        self.delays: list[float] = []

    def when(self, key: Hashable) -> float:
        delay = super().when(key)
        self.delays.append(delay)
        return delay


class StormHello(HelloReconciler):
    """The hello operator with its retries capped (``BACKOFF_CAP``)."""

    def __init__(self) -> None:
        super().__init__()
        self.limiters: list[RecordingBackoff] = []

    def rate_limiter(self) -> RecordingBackoff:
        self.limiters.append(RecordingBackoff())
        return self.limiters[-1]


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
        reconciler = StormHello()
        async with running(manager, reconciler):
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
    # The failed writes failed reconciles, which the controller retried through its limiter
    # (the one the reconciler gave it: built once, asked for every retry).
    (limiter,) = reconciler.limiters
    assert manager.controllers[0].queue.rate_limiter is limiter
    assert limiter.delays, "no reconcile was retried"
