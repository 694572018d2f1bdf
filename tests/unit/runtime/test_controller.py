"""Unit tests of the controller loop's pure logic: outcomes → queue, event → request mapping.

The reader is a dict and nothing talks to an apiserver (the reconcilers here define no
``finalize``); the finalizer flow and the real watches are covered by the integration tests.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from crdkit import Context, Reconciler, Request, Result, TerminalError
from crdkit.resources import ConfigMap, Node, ObjectMeta, OwnerReference
from crdkit.runtime.controller import Controller
from crdkit.runtime.predicates import GenerationChanged
from crdkit.runtime.ratelimit import ItemExponentialRateLimiter


def cm(name: str, namespace: str = "ns", generation: int = 1, **meta: Any) -> ConfigMap:
    return ConfigMap(
        metadata=ObjectMeta(name=name, namespace=namespace, generation=generation, **meta)
    )


class Scripted(Reconciler[ConfigMap]):
    """Answers each reconcile from a script of outcomes (a Result, None, or an exception)."""

    name = "scripted"

    def __init__(self, *outcomes: Any, delay: float = 0.0) -> None:
        self.outcomes = list(outcomes)
        self.calls: list[str] = []
        self.delay = delay

    async def reconcile(self, ctx: Context, obj: ConfigMap) -> Result | None:
        self.calls.append(obj.metadata.name or "")
        assert ctx.request == Request(obj.metadata.namespace, obj.metadata.name or "")
        assert ctx.log.extra is not None
        assert ctx.log.extra["reconcileID"] == ctx.reconcile_id
        if self.delay:
            await asyncio.sleep(self.delay)
        outcome = self.outcomes.pop(0) if self.outcomes else None
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome  # type: ignore[no-any-return]


def make(reconciler: Reconciler[Any], objects: dict[Request, Any]) -> Controller[Any]:
    return Controller(
        reconciler,
        client=None,  # type: ignore[arg-type]
        reader=objects.get,
        recorder=None,  # type: ignore[arg-type]
        cache=None,  # type: ignore[arg-type]
        rate_limiter=ItemExponentialRateLimiter(0.01, 1.0),
        registry=CollectorRegistry(),
    )


async def settle(controller: Controller[Any], calls: list[str], count: int) -> None:
    """Wait until ``count`` reconciles happened and none is in flight (fail after 5 s)."""
    for _ in range(1000):
        if len(calls) >= count and not controller.queue.processing:
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"expected {count} reconciles, saw {calls}")


async def test_success_forgets_and_requeue_after_comes_back() -> None:
    request = Request("ns", "a")
    reconciler = Scripted(Result(requeue_after=0.05), None)
    controller = make(reconciler, {request: cm("a")})
    controller.start()
    controller.queue.add(request)
    await settle(controller, reconciler.calls, 2)
    assert reconciler.calls == ["a", "a"]
    assert controller.queue.num_requeues(request) == 0
    await controller.stop(grace=1)


async def test_errors_back_off_and_terminal_errors_stop() -> None:
    request = Request("ns", "a")
    reconciler = Scripted(RuntimeError("x"), RuntimeError("y"), TerminalError("no"))
    controller = make(reconciler, {request: cm("a")})
    controller.start()
    controller.queue.add(request)
    await settle(controller, reconciler.calls, 3)
    await asyncio.sleep(0.1)
    assert reconciler.calls == ["a", "a", "a"], "terminal error is not retried"
    assert controller.queue.num_requeues(request) == 0, "terminal error forgets the backoff"
    assert len(controller.queue) == 0
    await controller.stop(grace=1)


async def test_requeue_true_uses_the_rate_limiter() -> None:
    request = Request("ns", "a")
    reconciler = Scripted(Result(requeue=True), None)
    controller = make(reconciler, {request: cm("a")})
    controller.start()
    controller.queue.add(request)
    await settle(controller, reconciler.calls, 2)
    await controller.stop(grace=1)


def test_a_reconciler_may_bring_its_own_rate_limiter() -> None:
    mine = ItemExponentialRateLimiter(0.001, 2.0)

    class Patient(Scripted):
        def rate_limiter(self) -> ItemExponentialRateLimiter:
            return mine

    assert make(Patient(), {}).queue.rate_limiter is mine
    given = make(Scripted(), {}).queue.rate_limiter
    assert isinstance(given, ItemExponentialRateLimiter)
    assert given is not mine
    # The cap holds however often the object fails.
    request = Request("ns", "a")
    delays = [mine.when(request) for _ in range(40)]
    assert delays[:3] == [0.001, 0.002, 0.004]
    assert max(delays) == 2.0


async def test_reconcile_timeout_is_retried() -> None:
    class Timed(Scripted):
        reconcile_timeout = 0.05

    request = Request("ns", "a")
    reconciler = Timed(delay=0.0)
    reconciler.delay = 0.2
    controller = make(reconciler, {request: cm("a")})
    controller.start()
    controller.queue.add(request)
    await settle(controller, reconciler.calls, 2)
    reconciler.delay = 0.0
    await settle(controller, reconciler.calls, 3)
    await controller.stop(grace=0)


async def test_missing_object_is_skipped() -> None:
    reconciler = Scripted()
    controller = make(reconciler, {})
    controller.start()
    controller.queue.add(Request("ns", "gone"))
    await asyncio.sleep(0.05)
    assert reconciler.calls == []
    await controller.stop(grace=1)


async def test_bad_return_value_is_an_error() -> None:
    request = Request("ns", "a")
    reconciler = Scripted("not a Result", None)
    controller = make(reconciler, {request: cm("a")})
    controller.start()
    controller.queue.add(request)
    await settle(controller, reconciler.calls, 2)
    await controller.stop(grace=1)


async def test_same_key_never_reconciled_concurrently() -> None:
    active: set[str] = set()
    overlaps: list[str] = []

    class Watcher(Scripted):
        max_concurrent_reconciles = 4

        async def reconcile(self, ctx: Context, obj: ConfigMap) -> None:
            name = obj.metadata.name or ""
            if name in active:
                overlaps.append(name)
            active.add(name)
            self.calls.append(name)
            await asyncio.sleep(0.01)
            active.discard(name)

    objects = {Request("ns", n): cm(n) for n in "abc"}
    reconciler = Watcher()
    controller = make(reconciler, objects)
    assert controller.workers == 4
    controller.start()
    for _ in range(10):
        for request in objects:
            controller.queue.add(request)
        await asyncio.sleep(0.004)
    await settle(controller, reconciler.calls, 3)
    await controller.stop(grace=1)
    assert overlaps == []


def test_primary_handlers_apply_predicates() -> None:
    controller = make(Scripted(), {})
    on_add, on_update, on_delete = controller.primary_handlers(GenerationChanged())
    on_update(cm("a"), cm("a"))
    assert len(controller.queue) == 0
    on_update(cm("a"), cm("a", generation=2))
    on_add(cm("b"))
    on_delete(cm("c"))
    assert [controller.queue.get_nowait() for _ in range(3)] == [
        Request("ns", "a"),
        Request("ns", "b"),
        Request("ns", "c"),
    ]


def owned(owner_kind: str, owner: str, api_version: str = "v1", controller: bool = True) -> Any:
    ref = OwnerReference(
        api_version=api_version, kind=owner_kind, name=owner, uid="u", controller=controller
    )
    return cm("child", owner_references=[ref])


def test_owned_objects_map_to_their_controlling_owner() -> None:
    controller = make(Scripted(), {})
    assert controller.owner_requests(owned("ConfigMap", "parent")) == [Request("ns", "parent")]
    assert controller.owner_requests(owned("ConfigMap", "p", controller=False)) == []
    assert controller.owner_requests(owned("Secret", "p")) == []
    assert controller.owner_requests(owned("ConfigMap", "p", api_version="x.io/v1")) == []
    _, on_update, _ = controller.owned_handlers()
    on_update(owned("ConfigMap", "old"), owned("ConfigMap", "new"))
    assert sorted(controller.queue.get_nowait() for _ in range(2)) == [
        Request("ns", "new"),
        Request("ns", "old"),
    ]


def test_mapped_watches_enqueue_what_the_function_returns() -> None:
    controller = make(Scripted(), {})

    def node_to_configmaps(node: Any) -> list[Request]:
        if node.metadata.name == "bad":
            raise RuntimeError("map functions may fail without breaking the handler")
        return [Request("ns", f"for-{node.metadata.name}")]

    on_add, _, _ = controller.mapped_handlers(node_to_configmaps)
    on_add(Node(metadata=ObjectMeta(name="bad")))
    on_add(Node(metadata=ObjectMeta(name="n1")))
    assert controller.queue.get_nowait() == Request("ns", "for-n1")


def test_bad_worker_counts() -> None:
    with pytest.raises(ValueError, match="max_concurrent_reconciles"):
        Controller(
            Scripted(),
            client=None,  # type: ignore[arg-type]
            reader=dict().get,
            recorder=None,  # type: ignore[arg-type]
            cache=None,  # type: ignore[arg-type]
            max_concurrent_reconciles=0,
            registry=CollectorRegistry(),
        )
