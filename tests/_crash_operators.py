"""Operators for the crash-consistency kit's own tests: three with a crash bug each, and the
correct version of each. Imported by module name by the unit tests (FakeCluster) and the
integration tests (a real apiserver); this folder is on ``sys.path`` through tests/conftest.py.

1. ``Duplicating`` makes its child with ``generateName`` every reconcile until its status says
   done: a crash after the create, or a lost answer, makes a second child.
2. ``CacheTrusting`` looks for its child in its cache right after its own writes: a watch event
   it never sees (or a cache that starts behind) makes a second child.
3. ``Unfinalizing`` sets a finalizer but clears it only when it still sees the child: a crash
   after deleting the child leaves the parent stuck deleting.

Each ``Correct*`` does the same job crash-safely. All run on ``Parent`` objects with ConfigMap
children; ``make_operator(reconciler)`` is a scenario's operator factory for one of them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from crdkit.client import Client, NotFound
from crdkit.resources import ApiModel, ConfigMap, CustomResource, ObjectMeta
from crdkit.runtime import Context, Manager, Reconciler, Result
from crdkit.runtime.owners import set_controller_reference
from crdkit.testing.sim.managers import virtual_clock_manager

FINALIZER = "crash.example.com/cleanup"


class ParentSpec(ApiModel):
    note: str = ""


class ParentStatus(ApiModel):
    done: bool = False


class Parent(CustomResource, group="crash.example.com", version="v1", kind="Parent"):
    spec: ParentSpec = ParentSpec()
    status: ParentStatus | None = None


def _child(parent: Parent, *, name: str | None = None) -> ConfigMap:
    child = ConfigMap(
        metadata=ObjectMeta(
            name=name,
            generate_name=None if name else f"{parent.metadata.name}-",
            namespace=parent.metadata.namespace,
            labels={"parent": parent.metadata.name or ""},
        ),
        data={"from": parent.metadata.name or ""},
    )
    set_controller_reference(parent, child)
    return child


async def _mark_done(ctx: Context, parent: Parent) -> None:
    await ctx.client.patch(
        Parent,
        parent.metadata.name or "",
        {"status": {"done": True}},
        namespace=parent.metadata.namespace,
        subresource="status",
    )


class Duplicating(Reconciler[Parent]):
    """Bug 1: a child by generateName on every reconcile until the status says done."""

    name = "duplicating"
    owns = (ConfigMap,)

    async def reconcile(self, ctx: Context, obj: Parent) -> None:
        if obj.status is not None and obj.status.done:
            return
        await ctx.client.create(_child(obj))
        await _mark_done(ctx, obj)


class CorrectDuplicating(Reconciler[Parent]):
    """Bug 1 fixed: the child has a name of its own, so making it twice is one child."""

    name = "correct-duplicating"
    owns = (ConfigMap,)

    async def reconcile(self, ctx: Context, obj: Parent) -> None:
        if obj.status is not None and obj.status.done:
            return
        await ctx.apply(_child(obj, name=f"{obj.metadata.name}-child"))
        await _mark_done(ctx, obj)


async def _children(ctx: Context, parent: Parent) -> list[ConfigMap]:
    listed = await ctx.cache.list(ConfigMap, namespace=parent.metadata.namespace)
    return [
        child
        for child in listed.items
        if any(ref.uid == parent.metadata.uid for ref in child.metadata.owner_references or [])
    ]


class CacheTrusting(Reconciler[Parent]):
    """Bug 2: asks its cache whether the child exists, right after its own writes, and makes
    one (by generateName) when the cache has none."""

    name = "cache-trusting"
    owns = (ConfigMap,)

    async def reconcile(self, ctx: Context, obj: Parent) -> Result | None:
        if not await _children(ctx, obj):
            await ctx.client.create(_child(obj))
        if obj.status is None or not obj.status.done:
            await _mark_done(ctx, obj)
        return None


class CorrectCacheTrusting(Reconciler[Parent]):
    """Bug 2 fixed: the same check, but the child's name is fixed, so a cache that has not
    seen it yet costs an AlreadyExists (as apply: nothing), never a second child."""

    name = "correct-cache-trusting"
    owns = (ConfigMap,)

    async def reconcile(self, ctx: Context, obj: Parent) -> Result | None:
        if not await _children(ctx, obj):
            await ctx.apply(_child(obj, name=f"{obj.metadata.name}-child"))
        if obj.status is None or not obj.status.done:
            await _mark_done(ctx, obj)
        return None


async def _set_finalizers(ctx: Context, obj: Parent, finalizers: list[str]) -> None:
    await ctx.client.patch(
        Parent,
        obj.metadata.name or "",
        {"metadata": {"finalizers": finalizers or None}},
        namespace=obj.metadata.namespace,
    )


class Unfinalizing(Reconciler[Parent]):
    """Bug 3: on deletion, deletes the child and clears the finalizer, but when the child is
    already gone (deleted before a crash) it returns without clearing it."""

    name = "unfinalizing"
    owns = (ConfigMap,)

    async def reconcile(self, ctx: Context, obj: Parent) -> None:
        name = f"{obj.metadata.name}-child"
        finalizers = list(obj.metadata.finalizers or [])
        if obj.metadata.deletion_timestamp is not None:
            try:
                await ctx.cache.get(ConfigMap, name, namespace=obj.metadata.namespace)
            except NotFound:
                return  # the bug: the finalizer stays
            await ctx.client.delete(ConfigMap, name, namespace=obj.metadata.namespace)
            await _set_finalizers(ctx, obj, [f for f in finalizers if f != FINALIZER])
            return
        if FINALIZER not in finalizers:
            await _set_finalizers(ctx, obj, [*finalizers, FINALIZER])
        await ctx.apply(_child(obj, name=name))
        if obj.status is None or not obj.status.done:
            await _mark_done(ctx, obj)


class CorrectUnfinalizing(Reconciler[Parent]):
    """Bug 3 fixed: the finalizer is cleared once the child is gone, however it went."""

    name = "correct-unfinalizing"
    owns = (ConfigMap,)

    async def reconcile(self, ctx: Context, obj: Parent) -> None:
        name = f"{obj.metadata.name}-child"
        finalizers = list(obj.metadata.finalizers or [])
        if obj.metadata.deletion_timestamp is not None:
            if FINALIZER in finalizers:
                with contextlib.suppress(NotFound):
                    await ctx.client.delete(ConfigMap, name, namespace=obj.metadata.namespace)
                await _set_finalizers(ctx, obj, [f for f in finalizers if f != FINALIZER])
            return
        if FINALIZER not in finalizers:
            await _set_finalizers(ctx, obj, [*finalizers, FINALIZER])
        await ctx.apply(_child(obj, name=name))
        if obj.status is None or not obj.status.done:
            await _mark_done(ctx, obj)


def make_operator(reconciler: type[Reconciler[Any]]) -> Callable[[Client, str], Manager]:
    """A scenario's operator factory: a Manager on the namespace running ``reconciler``,
    without servers, on the running loop's clock."""

    def build(client: Client, namespace: str) -> Manager:
        manager = virtual_clock_manager(client, namespace=namespace)
        manager.add(reconciler())
        return manager

    return build


async def wait_until(check: Callable[[], Any], within: float, what: str) -> None:
    """Poll ``check`` (a coroutine function) on the loop's clock, virtual or not."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"{what} not met within {within}s")
        await asyncio.sleep(0.1)


async def create_parents(client: Client, namespace: str, count: int = 1) -> None:
    """The workload of bugs 1 and 2: ``count`` Parents."""
    for index in range(count):
        await client.create(Parent(metadata=ObjectMeta(name=f"p{index}", namespace=namespace)))


async def create_then_delete(client: Client, namespace: str) -> None:
    """The workload of bug 3: a Parent, deleted once done."""
    await client.create(Parent(metadata=ObjectMeta(name="p0", namespace=namespace)))

    async def done() -> bool:
        parent = await client.get(Parent, "p0", namespace=namespace)
        return parent.status is not None and parent.status.done

    await wait_until(done, 120, "the Parent done")
    await client.delete(Parent, "p0", namespace=namespace)
