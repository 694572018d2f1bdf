"""Poison objects on the real apiserver: stored objects the model refuses never stop an Informer.

The CRD is built from the model, but the model has a rule with no CEL twin (a range whose min
must not exceed its max), so the apiserver stores what the model refuses. Such objects are
created before the informer starts (they come in the list) and after (in the watch).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from _runtime_support import eventually, http_get, new_manager, running
from prometheus_client import CollectorRegistry
from pydantic import model_validator

from crdkit import Context, Reconciler
from crdkit.client import Client, GroupVersionKind, object_key
from crdkit.crd import build_crd
from crdkit.resources import ApiModel, CustomResource, Event
from crdkit.runtime import EventRecorder
from crdkit.runtime.informer import Backoff, Informer
from crdkit.testing import ControlPlane

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

GROUP = "poison.crdkit.io"
GVK = GroupVersionKind(GROUP, "v1", "Widget")
METRIC = "crdkit_informer_decode_errors_total"


class Range(ApiModel):
    min: int = 0
    max: int = 0

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        # Python only: the CRD has no x-kubernetes-validations twin, so the apiserver stores
        # {min: 5, max: 1}, and the informer meets an object its model refuses.
        if self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        return self


class WidgetSpec(ApiModel):
    replicas: Range = Range()


class Widget(CustomResource, group=GROUP, version="v1", kind="Widget"):
    spec: WidgetSpec = WidgetSpec()


def widget(namespace: str, name: str, low: int = 0, high: int = 1) -> dict[str, Any]:
    """As a dict: the model would not build the poison ones."""
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": {"min": low, "max": high}},
    }


class WidgetReconciler(Reconciler[Widget]):
    name = "widgets"

    def __init__(self) -> None:
        self.seen: list[tuple[str, int, int]] = []

    async def reconcile(self, ctx: Context, obj: Widget) -> None:
        self.seen.append((obj.metadata.name or "", obj.spec.replicas.min, obj.spec.replicas.max))


async def invalid_object_events(client: Client, namespace: str, name: str) -> list[Event]:
    events = (await client.list(Event, namespace=namespace)).items
    return [
        e
        for e in events
        if e.reason == "InvalidObject" and e.regarding is not None and e.regarding.name == name
    ]


@pytest.fixture
async def refusals(
    control_plane: ControlPlane, caplog: pytest.LogCaptureFixture
) -> Callable[[str], list[str]]:
    """Installs the Widget CRD and captures the informers' warnings: what it gives is the
    refusals logged for an object's key."""
    caplog.set_level(logging.WARNING, logger="crdkit.runtime.informer")
    await control_plane.install_crds([build_crd([Widget])])

    def logged(key: str) -> list[str]:
        messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        return [m for m in messages if f" {key} " in m and "not a valid Widget" in m]

    return logged


async def test_poison_objects_never_stop_the_informer_of_a_manager(
    crdkit_client: Client, namespace: str, refusals: Callable[[str], list[str]]
) -> None:
    await crdkit_client.create(widget(namespace, "good-1"))
    await crdkit_client.create(widget(namespace, "poison-list", low=5, high=1))
    await crdkit_client.create(widget(namespace, "good-2"))
    reconciler = WidgetReconciler()
    registry = CollectorRegistry()
    manager = new_manager(crdkit_client, namespace, registry=registry)
    async with running(manager, reconciler):  # ready: every cache synced
        informer = manager.informers.informer(Widget, namespace=namespace)
        assert informer.has_synced
        await crdkit_client.create(widget(namespace, "poison-watch", low=9, high=2))
        await crdkit_client.create(widget(namespace, "good-3"))  # after the poison

        async def good_ones_cached() -> bool:
            keys = set(informer.store.keys())
            return {f"{namespace}/good-{i}" for i in (1, 2, 3)} <= keys

        await eventually(good_ones_cached, what="every good Widget cached")
        assert f"{namespace}/poison-list" not in informer.store
        assert f"{namespace}/poison-watch" not in informer.store
        assert sorted(informer.invalid) == [f"{namespace}/poison-list", f"{namespace}/poison-watch"]
        assert registry.get_sample_value(METRIC, {"group": GROUP, "kind": "Widget"}) == 2
        status, body = await http_get(manager.metrics_port or 0, "/metrics")
        assert status == 200
        assert f'{METRIC}{{group="{GROUP}",kind="Widget"}} 2.0' in body

        for name in ("poison-list", "poison-watch"):

            async def one_event(name: str = name) -> bool:
                return len(await invalid_object_events(crdkit_client, namespace, name)) == 1

            await eventually(one_event, what=f"an InvalidObject Event on {name}")
            [event] = await invalid_object_events(crdkit_client, namespace, name)
            assert event.type == "Warning"
            assert event.reporting_controller == "crdkit.io/informer"
            stored = await crdkit_client.get(GVK, name, namespace=namespace)
            assert event.regarding is not None
            assert event.regarding.kind == "Widget"
            # kubectl describe finds it by uid
            assert event.regarding.uid == stored["metadata"]["uid"]
            assert event.regarding.resource_version == stored["metadata"]["resourceVersion"]
            assert event.note is not None
            assert "spec.replicas: Value error, min" in event.note
            [logged] = refusals(f"{namespace}/{name}")
            assert "spec.replicas" in logged

        # Fixed: a new resourceVersion that validates enters the store, reconciled as an add.
        fixed = await crdkit_client.patch(
            Widget, "poison-list", {"spec": {"replicas": {"min": 1}}}, namespace=namespace
        )

        async def fixed_cached() -> bool:
            return informer.store.version_of(object_key(fixed)) == fixed.metadata.resource_version

        await eventually(fixed_cached, what="the fixed Widget cached")

        async def fixed_reconciled() -> bool:
            return ("poison-list", 1, 1) in reconciler.seen

        await eventually(fixed_reconciled, what="the fixed Widget reconciled")
        assert f"{namespace}/poison-list" not in informer.invalid

        # Deleting a poison object breaks nothing: it is forgotten, and the watch goes on.
        await crdkit_client.delete(GVK, "poison-watch", namespace=namespace)
        await crdkit_client.create(widget(namespace, "good-4"))

        async def deleted_and_went_on() -> bool:
            return (
                f"{namespace}/good-4" in informer.store
                and f"{namespace}/poison-watch" not in informer.invalid
            )

        await eventually(deleted_and_went_on, what="the poison forgotten, good-4 cached")
        await eventually(
            lambda: _reconciled(reconciler, "good-4"), what="good-4 reconciled after the delete"
        )
    names = {name for name, _, _ in reconciler.seen}
    assert {"good-1", "good-2", "good-3", "good-4", "poison-list"} <= names
    assert "poison-watch" not in names
    # The reconciler never saw a refused version.
    assert all(low <= high for _, low, high in reconciler.seen)
    assert len(refusals(f"{namespace}/poison-list")) == 1
    assert len(refusals(f"{namespace}/poison-watch")) == 1


async def _reconciled(reconciler: WidgetReconciler, name: str) -> bool:
    return any(seen == name for seen, _, _ in reconciler.seen)


async def test_a_relist_reports_a_poison_object_once_and_a_valid_one_turned_bad_leaves(
    control_plane: ControlPlane,
    crdkit_client: Client,
    namespace: str,
    refusals: Callable[[str], list[str]],
) -> None:
    """A standalone informer, given a recorder; relisted after etcd compaction."""
    await crdkit_client.create(widget(namespace, "poison", low=3, high=0))
    await crdkit_client.create(widget(namespace, "turns-bad"))
    registry = CollectorRegistry()
    recorder = EventRecorder(
        crdkit_client, reporting_controller="poison.crdkit.io/test", reporting_instance="t"
    )
    informer: Informer[Widget] = Informer(
        crdkit_client,
        Widget,
        namespace=namespace,
        backoff=Backoff(0.1, 2.0),
        event_recorder=recorder,
        registry=registry,
    )
    deleted: list[str] = []
    informer.add_event_handler(on_delete=lambda obj: deleted.append(object_key(obj)))
    async with informer:
        assert await informer.wait_for_sync(timeout=60)
        assert informer.store.keys() == [f"{namespace}/turns-bad"]

        async def event_recorded() -> bool:
            return len(await invalid_object_events(crdkit_client, namespace, "poison")) == 1

        await eventually(event_recorded, what="an InvalidObject Event")
    # Disconnected: "turns-bad" is broken meanwhile, and etcd's history compacted past the
    # informer's resourceVersion, so it must relist; "poison" comes again at the same version.
    await crdkit_client.patch(
        GVK, "turns-bad", {"spec": {"replicas": {"min": 7}}}, namespace=namespace
    )
    await control_plane.compact_etcd()
    lists_before = informer.list_count
    async with informer:

        async def relisted() -> bool:
            return informer.list_count > lists_before and f"{namespace}/turns-bad" in (
                informer.invalid
            )

        await eventually(relisted, what="a relist that refuses turns-bad")
        await informer.drain()
        assert informer.store.keys() == []
        assert deleted == [f"{namespace}/turns-bad"]  # its last valid version left the cache

        async def both_events() -> bool:
            return len(await invalid_object_events(crdkit_client, namespace, "turns-bad")) == 1

        await eventually(both_events, what="an InvalidObject Event on turns-bad")
    # "poison" was listed twice at one version: one log line, one count, one Event.
    assert len(await invalid_object_events(crdkit_client, namespace, "poison")) == 1
    assert len(refusals(f"{namespace}/poison")) == 1
    assert registry.get_sample_value(METRIC, {"group": GROUP, "kind": "Widget"}) == 2
