"""Controller behaviour on the real apiserver: finalizers, graceful drain, status conflicts,
events, and retries after errors."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from _runtime_support import HELLO_CRD, eventually, new_manager, running
from examples.hello.operator import Hello, HelloSpec, HelloStatus

from crdkit import Context, Reconciler, Result, TerminalError
from crdkit.client import Client, Conflict, GroupVersionKind, NotFound
from crdkit.resources import ConfigMap, Event, ObjectMeta
from crdkit.runtime import EventRecorder, GenerationChanged, Manager, Request, update_status
from crdkit.testing import ControlPlane

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def hello(namespace: str, name: str, target: str = "x") -> Hello:
    return Hello(metadata=ObjectMeta(name=name, namespace=namespace), spec=HelloSpec(target=target))


@pytest.fixture
async def hellos(control_plane: ControlPlane, crdkit_client: Client, namespace: str) -> Hellos:
    """The Hello CRD installed, and the test's client and namespace."""
    await control_plane.install_crds([HELLO_CRD])
    return Hellos(crdkit_client, namespace)


@dataclass(frozen=True)
class Hellos:
    client: Client
    namespace: str

    async def create(self, name: str) -> Hello:
        return await self.client.create(hello(self.namespace, name))

    @contextlib.asynccontextmanager
    async def reconciling(
        self, reconciler: Reconciler[Hello], *names: str
    ) -> AsyncIterator[Manager]:
        """``reconciler`` running in a manager on the namespace, and the Hellos ``names``
        created."""
        async with running(new_manager(self.client, self.namespace), reconciler) as manager:
            for name in names:
                await self.create(name)
            yield manager


class FinalizingReconciler(Reconciler[Hello]):
    name = "finalizing"

    def __init__(self) -> None:
        self.reconciled: list[str] = []
        self.finalized: list[str] = []
        self.fail_first_finalize = True

    async def reconcile(self, ctx: Context, obj: Hello) -> None:
        self.reconciled.append(obj.metadata.name or "")

    async def finalize(self, ctx: Context, obj: Hello) -> None:
        if self.fail_first_finalize:
            self.fail_first_finalize = False
            raise RuntimeError("clean-up failed once: must be retried, finalizer kept")
        self.finalized.append(obj.metadata.name or "")


async def test_finalizer_added_then_finalize_and_removed(
    hellos: Hellos, crdkit_client: Client, namespace: str
) -> None:
    reconciler = FinalizingReconciler()
    finalizer = "hello.example.com/finalizing-finalizer"
    async with hellos.reconciling(reconciler, "f1"):

        async def has_finalizer() -> bool:
            obj = await crdkit_client.get(Hello, "f1", namespace=namespace)
            return finalizer in obj.metadata.finalizers and "f1" in reconciler.reconciled

        await eventually(has_finalizer, what="finalizer added and reconciled")
        await crdkit_client.delete(Hello, "f1", namespace=namespace)

        async def gone() -> bool:
            try:
                await crdkit_client.get(Hello, "f1", namespace=namespace)
            except NotFound:
                return True
            return False

        await eventually(gone, what="object deleted after finalize")
        assert reconciler.finalized == ["f1"]
        assert not reconciler.fail_first_finalize, "the failed finalize was retried"


class SlowReconciler(Reconciler[Hello]):
    name = "slow"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = asyncio.Event()
        self.finished: list[str] = []
        self.cancelled: list[str] = []

    async def reconcile(self, ctx: Context, obj: Hello) -> None:
        self.started.set()
        try:
            await asyncio.sleep(self.seconds)
        except asyncio.CancelledError:
            self.cancelled.append(obj.metadata.name or "")
            raise
        self.finished.append(obj.metadata.name or "")


@pytest.mark.parametrize(("grace", "drained"), [(10.0, True), (0.3, False)])
async def test_graceful_shutdown_drains_within_grace(
    hellos: Hellos, crdkit_client: Client, namespace: str, grace: float, drained: bool
) -> None:
    reconciler = SlowReconciler(seconds=1.5)
    manager = new_manager(crdkit_client, namespace, graceful_shutdown_timeout=grace)
    manager.add(reconciler)
    task = asyncio.create_task(manager.run())
    await hellos.create("slow")
    await asyncio.wait_for(reconciler.started.wait(), 30)
    manager.stop()
    await asyncio.wait_for(task, 30)
    if drained:
        assert reconciler.finished == ["slow"]
        assert reconciler.cancelled == []
    else:
        assert reconciler.finished == []
        assert reconciler.cancelled == ["slow"]


class FlakyReconciler(Reconciler[Hello]):
    name = "flaky"

    def __init__(self) -> None:
        self.attempts: dict[str, int] = {}

    async def reconcile(self, ctx: Context, obj: Hello) -> Result | None:
        name = obj.metadata.name or ""
        self.attempts[name] = self.attempts.get(name, 0) + 1
        if name == "terminal":
            raise TerminalError("spec can never work")
        if name == "flaky" and self.attempts[name] < 3:
            raise RuntimeError("transient")
        return None


async def test_errors_retry_with_backoff_and_terminal_errors_do_not(
    hellos: Hellos, crdkit_client: Client, namespace: str
) -> None:
    reconciler = FlakyReconciler()
    async with hellos.reconciling(reconciler, "flaky", "terminal") as manager:

        async def flaky_done() -> bool:
            return reconciler.attempts.get("flaky", 0) >= 3

        await eventually(flaky_done, what="flaky reconciled after retries")
        await asyncio.sleep(0.5)
        assert reconciler.attempts["terminal"] == 1
        controller = manager.controllers[0]
        assert controller.queue.num_requeues(Request(namespace, "flaky")) == 0, "forgotten"

        def sample(metric: str, **labels: str) -> float:
            value = manager.registry.get_sample_value(metric, {"controller": "flaky", **labels})
            return value or 0.0

        assert sample("controller_runtime_terminal_reconcile_errors_total") == 1
        assert sample("controller_runtime_reconcile_errors_total") >= 3
        assert sample("workqueue_retries_total", name="flaky") >= 2


class Scribbling(Reconciler[Hello]):
    """Changes what it is given; the next reconcile must still see the cached object as is."""

    name = "scribbling"

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []

    async def reconcile(self, ctx: Context, obj: Hello) -> Result:
        self.seen.append(dict(obj.metadata.labels))
        obj.metadata.labels["scribbled"] = "by the reconciler"
        obj.spec.target = "changed in memory only"
        return Result(requeue_after=0.01) if len(self.seen) < 3 else Result()


async def test_reconcile_gets_a_private_copy_not_the_cached_object(
    hellos: Hellos, crdkit_client: Client, namespace: str
) -> None:
    reconciler = Scribbling()
    async with hellos.reconciling(reconciler, "p1") as manager:

        async def three_reconciles() -> bool:
            return len(reconciler.seen) >= 3

        await eventually(three_reconciles, what="three reconciles")
        cached = await manager.cache.get(Hello, "p1", namespace=namespace)
    assert reconciler.seen[:3] == [{}, {}, {}]
    assert cached.metadata.labels == {}
    assert cached.spec.target == "x"


async def test_update_status_retries_on_conflict(
    hellos: Hellos, crdkit_client: Client, namespace: str
) -> None:
    stale = await hellos.create("st")
    # Someone else writes first: the stale copy's resourceVersion no longer matches.
    await crdkit_client.patch(Hello, "st", {"spec": {"greeting": "Hi"}}, namespace=namespace)
    stale.status = HelloStatus(config_map="from-stale-copy")
    with pytest.raises(Conflict):
        await update_status(crdkit_client, stale, attempts=1)
    stored = await update_status(crdkit_client, stale)
    assert stored.status is not None
    assert stored.status.config_map == "from-stale-copy"
    assert stored.spec.greeting == "Hi", "the other writer's change survives"

    def bump(obj: Hello) -> None:
        assert obj.status is not None
        obj.status.observed_generation = obj.metadata.generation

    bumped = await update_status(crdkit_client, stale, mutate=bump)
    assert bumped.status is not None
    assert bumped.status.observed_generation == bumped.metadata.generation


async def test_event_recorder_aggregates_repeats(crdkit_client: Client, namespace: str) -> None:
    subject = await crdkit_client.create(
        ConfigMap(metadata=ObjectMeta(name="subject", namespace=namespace))
    )
    recorder = EventRecorder(
        crdkit_client, reporting_controller="test.crdkit.io/events", reporting_instance="t-1"
    )
    for _ in range(3):
        await recorder.event(subject, "Warning", "Broken", "the same failure")
    await recorder.event(subject, "Normal", "Fixed", "all good")
    events = (await crdkit_client.list(Event, namespace=namespace)).items
    by_reason = {e.reason: e for e in events}
    assert sorted(by_reason) == ["Broken", "Fixed"]
    broken = by_reason["Broken"]
    assert broken.series is not None
    assert broken.series.count == 3
    assert broken.regarding is not None
    assert broken.regarding.uid == subject.metadata.uid
    assert broken.reporting_controller == "test.crdkit.io/events"
    assert by_reason["Fixed"].series is None
    # The core/v1 view, which `kubectl get events` reads: events.k8s.io/v1 refuses the
    # deprecated firstTimestamp, lastTimestamp and count on create (422, "needs to be unset"),
    # so these Events sort by `--sort-by=.eventTime`, and a series counts its repeats.
    core = await crdkit_client.get(
        GroupVersionKind("", "v1", "Event"), broken.metadata.name or "", namespace=namespace
    )
    assert core["eventTime"] is not None
    assert core["series"]["count"] == 3
    assert core.get("lastTimestamp") is None
    with pytest.raises(ValueError, match="type_"):
        await recorder.event(subject, "Odd", "X")  # type: ignore[arg-type]


def hellos_named_by_label(obj: Any) -> list[Request]:
    """A mapped watch: a ConfigMap labelled ``hello=<name>`` concerns that Hello."""
    name = obj.metadata.labels.get("hello")
    return [Request(obj.metadata.namespace, name)] if name else []


class WatchingReconciler(Reconciler[Hello]):
    name = "watching"
    watches = ((ConfigMap, hellos_named_by_label),)
    predicates = GenerationChanged()

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def reconcile(self, ctx: Context, obj: Hello) -> None:
        self.calls.append(obj.metadata.name or "")


async def test_mapped_watch_and_predicates(
    hellos: Hellos, crdkit_client: Client, namespace: str
) -> None:
    reconciler = WatchingReconciler()
    async with hellos.reconciling(reconciler, "w"):
        await eventually(lambda: _called(reconciler, 1), what="reconciled on create")
        # A metadata-only change does not pass GenerationChanged: no reconcile.
        await crdkit_client.patch(
            Hello, "w", {"metadata": {"labels": {"x": "y"}}}, namespace=namespace
        )
        await asyncio.sleep(1)
        assert reconciler.calls == ["w"]
        # A ConfigMap that maps to the Hello reconciles it.
        await crdkit_client.create(
            ConfigMap(metadata=ObjectMeta(name="c", namespace=namespace, labels={"hello": "w"}))
        )
        await eventually(lambda: _called(reconciler, 2), what="reconciled by the mapped watch")
        # A spec change passes the predicate.
        await crdkit_client.patch(Hello, "w", {"spec": {"target": "y"}}, namespace=namespace)
        await eventually(lambda: _called(reconciler, 3), what="reconciled on spec change")


async def _called(reconciler: WatchingReconciler, times: int) -> bool:
    return len(reconciler.calls) >= times
