"""A selector watch from any version, applied to the list at that version, gives the list now.

That is what an informer relies on (list, then watch from the list's version): on the fake,
for any sequence of creates, label changes, finalizer-held and plain deletes, the events of a
``label_selector`` watch started at a version seen midway, applied to the selected list taken
there, reproduce the selected list at the end.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from crdkit.client import AlreadyExists, Client, GroupVersionKind, Invalid, NotFound
from crdkit.testing import FakeCluster

CM = GroupVersionKind("", "v1", "ConfigMap")
NS = "ns"
NAMES = st.sampled_from(["a", "b", "c", "d"])
OPS = st.lists(
    st.tuples(
        st.sampled_from(["create", "label", "hold", "delete", "release"]), NAMES, st.booleans()
    ),
    min_size=1,
    max_size=25,
)


async def step(client: Client, op: str, name: str, flag: bool) -> None:
    labels = {"x": "1"} if flag else {"x": "0"}
    try:
        if op == "create":
            body = {"apiVersion": "v1", "kind": "ConfigMap"}
            await client.create(
                {**body, "metadata": {"name": name, "namespace": NS, "labels": labels}}
            )
        elif op == "label":
            await client.patch(CM, name, {"metadata": {"labels": labels}}, namespace=NS)
        elif op == "hold":
            await client.patch(CM, name, {"metadata": {"finalizers": ["x.io/f"]}}, namespace=NS)
        elif op == "delete":
            await client.delete(CM, name, namespace=NS)
        else:
            await client.patch(CM, name, {"metadata": {"finalizers": None}}, namespace=NS)
    except (NotFound, AlreadyExists, Invalid):
        pass  # as the apiserver answers: gone, taken, or a new finalizer while deleting


async def selected(client: Client) -> dict[str, str]:
    page = await client.list(CM, namespace=NS, label_selector="x=1")
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in page.items}


async def scenario(ops: list[tuple[str, str, bool]], cut: int) -> tuple[dict[str, Any], ...]:
    cluster = FakeCluster()
    async with cluster.client() as client:
        for op in ops[:cut]:
            await step(client, *op)
        snapshot_page = await client.list(CM, namespace=NS, label_selector="x=1")
        state = {
            o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in snapshot_page.items
        }
        for op in ops[cut:]:
            await step(client, *op)
        await step(client, "create", "zz-end", True)
        final = await selected(client)
        async with asyncio.timeout(10):  # a hang guard: every event is already written
            async for event in client.watch(
                CM,
                namespace=NS,
                label_selector="x=1",
                resource_version=snapshot_page.resource_version,
            ):
                obj = event.object
                name, version = obj["metadata"]["name"], obj["metadata"]["resourceVersion"]
                if event.type == "DELETED":
                    state.pop(name, None)
                else:
                    state[name] = version
                if name == "zz-end":
                    break
    return state, final


@settings(max_examples=100, deadline=None)
@given(OPS, st.integers(0, 25))
# An object leaving the selector after the list must reach the watcher as DELETED.
@example(ops=[("create", "a", True), ("label", "a", False)], cut=1)
# A finalizer-held object vanishing when its finalizer goes.
@example(
    ops=[("create", "a", True), ("hold", "a", True), ("delete", "a", True), ("release", "a", True)],
    cut=3,
)
def test_list_then_watch_reconstructs_the_selected_objects(
    ops: list[tuple[str, str, bool]], cut: int
) -> None:
    state, final = asyncio.run(scenario(ops, cut % (len(ops) + 1)))
    assert state == final
