"""Kubernetes' own gang API (``scheduling.k8s.io/v1beta1`` PodGroup) on a kube-apiserver v1.37
started with its feature gates (``ControlPlane(workload_api=True)``, a plane of this module's
own): pods joined through ``spec.schedulingGroup`` bound whole under one rack, the
``PodGroupInitiallyScheduled`` condition False with the reason while the gang cannot fit and
True once bound, and a higher-priority gang preempting a lower one, whose pods are marked
``DisruptionTarget`` before they are deleted.

Nothing runs a kubelet: a pod deleted with a grace period stays terminating until the test
ends it as its kubelet would.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import pytest
import pytest_asyncio
from _cluster import BLOCK, POOL, RACK, bound_nodes, pool_with_nodes, running_scheduler

import factories
from crdkit.client import Client, NotFound
from crdkit.resources import Pod, PodGroup
from crdkit.scheduling.groups.discovery import served_pod_group_apis
from crdkit.scheduling.groups.kubernetes import INITIALLY_SCHEDULED
from crdkit.testing import ControlPlane, create_nodes, eventually, simulated_node

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def gated_plane() -> AsyncIterator[ControlPlane]:
    async with ControlPlane(workload_api=True) as plane:
        yield plane


async def gang(
    client: Client, namespace: str, name: str, pods: int, *, scheduler: str, **spec: Any
) -> list[str]:
    """A PodGroup of ``pods`` pods that must share a rack, then its pods (8 GPUs each), joined
    through ``spec.schedulingGroup``; ``spec``: more of the group's and the pods' spec
    (``priorityClassName``)."""
    group = factories.kubernetes_podgroup(name, pods, namespace=namespace, topology=RACK, **spec)
    await client.create(group)
    names = [f"{name}-{index}" for index in range(pods)]
    for pod_name in names:
        member = factories.pod(
            pod_name,
            namespace=namespace,
            pod_group=("kubernetes", name),
            scheduler=scheduler,
            container="c",
            image="busybox",
            gpus=8,
            limits={"nvidia.com/gpu": "8"},
            **spec,
        )
        await client.create(member)
    return names


async def condition(client: Client, namespace: str, group: str) -> tuple[str, str, str] | None:
    podgroup = await client.get(PodGroup, group, namespace=namespace)
    for found in (podgroup.status.conditions if podgroup.status else None) or []:
        if found.type == INITIALLY_SCHEDULED:
            return found.status or "", found.reason or "", found.message or ""
    return None


async def add_node(client: Client, pool: str, name: str, rack: str) -> None:
    labels = {POOL: pool, BLOCK: "b1", RACK: f"{pool}-{rack}"}
    await create_nodes(
        client,
        [
            simulated_node(
                f"{pool}-{name}",
                labels=labels,
                allocatable={"cpu": 32, "memory": "256Gi", "nvidia.com/gpu": 8, "pods": 110},
            )
        ],
    )


async def test_the_gated_apiserver_serves_the_api_and_the_scheduler_finds_it(
    gated_plane: ControlPlane,
) -> None:
    async with Client.from_control_plane(gated_plane) as client:
        assert await served_pod_group_apis(client) == ["kubernetes"]


async def test_a_gang_waits_saying_why_then_binds_whole_under_one_rack(
    gated_plane: ControlPlane,
) -> None:
    async with Client.from_control_plane(gated_plane) as client:
        pool, _, name = await pool_with_nodes(client, gated_plane, {"a": 2, "b": 2})
        names = await gang(client, pool, "job", 3, scheduler=name)
        async with running_scheduler(client, pool, name, pod_groups=("kubernetes",)):

            async def waiting() -> bool:
                said = await condition(client, pool, "job")
                return said is not None and said[:2] == ("False", "Unschedulable")

            await eventually(waiting, what="PodGroupInitiallyScheduled False")
            said = await condition(client, pool, "job")
            assert said is not None
            assert RACK in said[2]  # the explanation names the level the gang must keep to
            assert await bound_nodes(client, pool, "job") == [None, None, None]
            await add_node(client, pool, "b-n2", "b")

            async def scheduled() -> bool:
                said = await condition(client, pool, "job")
                return said is not None and said[:2] == ("True", "Scheduled")

            await eventually(scheduled, what="PodGroupInitiallyScheduled True")
            nodes = await bound_nodes(client, pool, "job")
            assert sorted(n or "" for n in nodes) == [f"{pool}-b-n{i}" for i in range(3)]
            assert len(names) == 3


async def priority_class(client: Client, name: str, value: int) -> None:
    body = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }
    await client.create(body)  # type: ignore[call-overload]


async def test_a_higher_priority_gang_preempts_marking_its_victims_first(
    gated_plane: ControlPlane,
) -> None:
    async with Client.from_control_plane(gated_plane) as client:
        pool, _, name = await pool_with_nodes(client, gated_plane, {"a": 2})
        await priority_class(client, f"{pool}-low", 10)
        await priority_class(client, f"{pool}-high", 1000)
        async with running_scheduler(client, pool, name, pod_groups=("kubernetes",)):
            low = await gang(
                client, pool, "low", 2, scheduler=name, priorityClassName=f"{pool}-low"
            )

            async def low_bound() -> bool:
                return None not in await bound_nodes(client, pool, "low")

            await eventually(low_bound, what="the low-priority gang bound")
            since = (await client.get(Pod, low[0], namespace=pool)).metadata.resource_version
            high = await gang(
                client, pool, "high", 2, scheduler=name, priorityClassName=f"{pool}-high"
            )
            assert (await client.get(PodGroup, "high", namespace=pool)).spec.priority == 1000

            # The victim's changes as a watch sees them: marked, then deleted.
            changes: list[tuple[bool, bool]] = []
            async for event in client.watch(
                Pod,
                namespace=pool,
                field_selector=f"metadata.name={low[0]}",
                resource_version=since,
                timeout_seconds=60,
            ):
                if event.type == "BOOKMARK":
                    continue
                seen = event.object
                marks = [
                    c
                    for c in (seen.status.conditions if seen.status else [])
                    if c.type == "DisruptionTarget"
                ]
                deleting = seen.metadata.deletion_timestamp is not None
                changes.append((bool(marks), deleting))
                if marks:
                    assert (marks[0].status, marks[0].reason) == ("True", "PreemptionByScheduler")
                if deleting:
                    break
            assert changes[-1] == (True, True), changes
            assert (True, False) in changes, changes  # the mark came before the delete
            for victim in low:  # as the kubelet would, once the victims' containers stopped
                with contextlib.suppress(NotFound):
                    await client.delete(Pod, victim, namespace=pool, grace_period_seconds=0)

            async def high_bound() -> bool:
                said = await condition(client, pool, "high")
                return None not in await bound_nodes(client, pool, "high") and said is not None

            await eventually(high_bound, what="the preemptor bound")
            assert await condition(client, pool, "high") == (
                "True",
                "Scheduled",
                "2 pods bound, of the 2 the gang needs",
            )
            assert len(high) == 2
