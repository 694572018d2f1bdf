"""Unit tests of ``Watch``: declaring, resolving a map named by a method, and the handlers'
plain and async maps, predicates and failures (no cluster needed)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from crdkit import Manager
from crdkit.resources import ConfigMap, ObjectMeta, OwnerReference, Secret
from crdkit.runtime import FuncPredicate, Reconciler, Request, Watch
from crdkit.runtime.controller import Controller
from crdkit.runtime.watch import declared_watches


def secret(name: str, namespace: str = "ns") -> Secret:
    return Secret(metadata=ObjectMeta(name=name, namespace=namespace))


def to_config(obj: Secret) -> list[Request]:
    return [Request(obj.metadata.namespace, f"cm-{obj.metadata.name}")]


class Mapping(Reconciler[ConfigMap]):
    name = "mapping"
    watches = (
        (Secret, to_config),
        Watch(Secret, "by_cache", metadata_only=True),
        Watch(Secret),
    )

    def __init__(self) -> None:
        self.known: dict[str, str] = {}
        self.set_up_with: Manager | None = None

    def setup(self, manager: Manager) -> None:
        self.set_up_with = manager
        self.known = {"s1": "from-setup"}

    async def by_cache(self, obj: Any) -> list[Request]:
        await asyncio.sleep(0)  # a real await: the map is a coroutine
        target = self.known.get(obj.metadata.name)
        return [Request(obj.metadata.namespace, target)] if target else []


def controller(reconciler: Reconciler[Any]) -> Controller[Any]:
    return Controller(
        reconciler,
        client=None,  # type: ignore[arg-type]
        reader=lambda request: None,
        recorder=None,  # type: ignore[arg-type]
        cache=None,  # type: ignore[arg-type]
        registry=CollectorRegistry(),
    )


def queued(ctrl: Controller[Any]) -> set[Request]:
    items = set()
    while len(ctrl.queue):
        items.add(ctrl.queue.get_nowait())
    return items


def test_tuples_and_watches_are_declared_alike() -> None:
    watches = declared_watches(Mapping)
    assert [(w.kind, w.map, w.metadata_only) for w in watches] == [
        (Secret, to_config, False),
        (Secret, "by_cache", True),
        (Secret, None, False),
    ]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Watch(dict), "Watch.kind must be a resource class"),  # type: ignore[arg-type]
        (lambda: Watch(Secret, 3), "must be a function, a method name or None"),  # type: ignore[arg-type]
    ],
)
def test_bad_watches_name_what_is_wrong(make: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        make()


def test_a_bad_tuple_names_its_index() -> None:
    class Bad(Reconciler[ConfigMap]):
        watches = ((Secret, to_config), (Secret,))  # type: ignore[assignment]

    with pytest.raises(TypeError, match=r"Bad\.watches\[1\]: expected Watch"):
        declared_watches(Bad)


def test_a_method_name_is_resolved_on_the_instance() -> None:
    reconciler = Mapping()
    resolved = Watch(Secret, "by_cache").resolve(reconciler)
    assert getattr(resolved, "__self__", None) is reconciler
    with pytest.raises(AttributeError, match=r"maps with 'nope', which Mapping does not define"):
        Watch(Secret, "nope").resolve(reconciler)
    with pytest.raises(TypeError, match="is not a method"):
        Watch(Secret, "known").resolve(reconciler)


def test_manager_add_wires_watches_then_calls_setup() -> None:
    manager = Manager(None, registry=CollectorRegistry())  # type: ignore[arg-type]
    reconciler = Mapping()
    manager.add(reconciler)
    assert reconciler.set_up_with is manager
    shapes = sorted(
        (key.resource.__name__, key.metadata_only) for key in manager.informers.informers
    )
    # Full Secrets (tuple and map=None), metadata-only Secrets, and the primary kind.
    assert shapes == [("ConfigMap", False), ("Secret", False), ("Secret", True)]


async def test_async_map_reads_what_setup_prepared() -> None:
    reconciler = Mapping()
    reconciler.setup(None)  # type: ignore[arg-type]
    ctrl = controller(reconciler)
    on_add, _, _ = ctrl.watch_handlers(Watch(Secret, "by_cache").resolve(reconciler))
    await on_add(secret("s1"))
    await on_add(secret("unknown"))
    assert queued(ctrl) == {Request("ns", "from-setup")}


async def test_plain_map_update_maps_old_and_new() -> None:
    ctrl = controller(Mapping())
    _, on_update, on_delete = ctrl.watch_handlers(to_config)
    await on_update(secret("a"), secret("b"))
    await on_delete(secret("c"))
    assert queued(ctrl) == {Request("ns", "cm-a"), Request("ns", "cm-b"), Request("ns", "cm-c")}


async def test_no_map_reconciles_the_controlling_owner() -> None:
    ctrl = controller(Mapping())
    on_add, _, _ = ctrl.watch_handlers(None)
    owned = secret("s")
    owned.metadata.owner_references = [
        OwnerReference(api_version="v1", kind="ConfigMap", name="owner", uid="u", controller=True)
    ]
    await on_add(owned)
    await on_add(secret("orphan"))
    assert queued(ctrl) == {Request("ns", "owner")}


async def test_predicates_filter_before_the_map() -> None:
    ctrl = controller(Mapping())
    only_a = FuncPredicate(create=lambda obj: obj.metadata.name == "a")
    on_add, _, _ = ctrl.watch_handlers(to_config, only_a)
    await on_add(secret("a"))
    await on_add(secret("b"))
    assert queued(ctrl) == {Request("ns", "cm-a")}


async def test_a_failing_map_is_logged_with_controller_and_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(obj: Any) -> list[Request]:
        raise RuntimeError("map bug")

    ctrl = controller(Mapping())
    on_add, _, _ = ctrl.watch_handlers(broken)
    with caplog.at_level(logging.ERROR):
        await on_add(secret("s9", "team"))  # must not raise: the informer carries on
    [record] = [r for r in caplog.records if "map function" in r.getMessage()]
    assert record.getMessage() == "map function of controller mapping failed on team/s9"
    assert record.exc_info is not None
    assert len(ctrl.queue) == 0
