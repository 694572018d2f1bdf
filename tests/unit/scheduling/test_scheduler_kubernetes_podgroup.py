"""``GangScheduler`` serving Kubernetes' own PodGroup on the fake cluster: pods joined through
``spec.schedulingGroup`` bound whole in the domain the PodGroup's topology key asks for, its
``PodGroupInitiallyScheduled`` condition saying why it waits and then that it is scheduled,
a Workload made after its PodGroup waking the gang, and the ``DisruptionTarget`` condition on
the pods preemption evicts (of any gang API)."""

from __future__ import annotations

from typing import Any

from _fake_scheduling import NAMESPACE, SCHEDULER, add_node, scheduling

from crdkit.client import Client
from crdkit.resources import Pod, PodGroup, Workload
from crdkit.scheduling.groups.kubernetes import INITIALLY_SCHEDULED
from crdkit.testing import eventually
from factories import coscheduling_podgroup, kubernetes_podgroup, pod

LEAF = "topology.crdkit.io/leaf"


async def two_leaves(client: Client) -> None:
    for leaf in ("a", "b"):
        for index in (1, 2):
            await add_node(client, f"{leaf}{index}", labels={LEAF: leaf})


async def members(client: Client, group: str, count: int, **spec: Any) -> list[str]:
    names = [f"{group}-{i}" for i in range(count)]
    for name in names:
        made = pod(name, gpus=8, scheduler=SCHEDULER, pod_group=("kubernetes", group), **spec)
        await client.create(made)
    return names


async def scheduled_condition(client: Client, group: str) -> dict[str, Any] | None:
    podgroup = await client.get(PodGroup, group, namespace=NAMESPACE)
    conditions = podgroup.status.conditions if podgroup.status else None
    for condition in conditions or []:
        if condition.type == INITIALLY_SCHEDULED:
            return condition.model_dump(by_alias=True, exclude_none=True, mode="json")
    return None


async def condition_is(client: Client, group: str, status: str, says: str) -> None:
    async def written() -> bool:
        found = await scheduled_condition(client, group)
        return found is not None and found["status"] == status and says in found["message"]

    await eventually(written, what=f"{group}: {INITIALLY_SCHEDULED}={status} ({says})")


async def nodes_of(client: Client, names: list[str]) -> list[str | None]:
    return [(await client.get(Pod, n, namespace=NAMESPACE)).spec.node_name for n in names]


async def test_a_gang_joined_by_its_spec_binds_whole_in_one_leaf_and_says_so() -> None:
    async with scheduling(pod_groups=("kubernetes",), levels=[LEAF]) as (_, client):
        await add_node(client, "a1", labels={LEAF: "a"})
        await add_node(client, "b1", labels={LEAF: "b"})
        await client.create(kubernetes_podgroup("job", 2, topology=LEAF))
        names = await members(client, "job", 2)
        # One node free in each leaf: the gang fits the cluster but no leaf.
        await condition_is(client, "job", "False", "Unschedulable: ")
        assert await nodes_of(client, names) == [None, None]
        await add_node(client, "b2", labels={LEAF: "b"})
        await condition_is(client, "job", "True", "2 pods bound")
        assert sorted(await nodes_of(client, names)) == ["b1", "b2"]


async def test_min_count_above_the_pods_that_exist_waits_and_says_so() -> None:
    async with scheduling(pod_groups=("kubernetes",), levels=[LEAF]) as (_, client):
        await two_leaves(client)
        await client.create(kubernetes_podgroup("job", 3))
        names = await members(client, "job", 2)
        await condition_is(client, "job", "False", "WaitingForPods: 2 of the 3 pods")
        assert await nodes_of(client, names) == [None, None]
        await client.create(
            pod("job-2", gpus=8, scheduler=SCHEDULER, pod_group=("kubernetes", "job"))
        )
        await condition_is(client, "job", "True", "3 pods bound")


async def test_pods_of_another_priority_keep_the_gang_waiting_naming_the_field() -> None:
    async with scheduling(pod_groups=("kubernetes",), levels=[LEAF]) as (_, client):
        await two_leaves(client)
        group = kubernetes_podgroup("job", 2, priorityClassName="high", priority=1000)
        await client.create(group)
        await members(client, "job", 2, priority=1000, priorityClassName="low")
        await condition_is(
            client,
            "job",
            "False",
            "InvalidPodGroup: spec.priorityClassName: the group's priority class is 'high'",
        )


async def test_a_workload_made_after_its_podgroup_wakes_the_gang_with_its_topology() -> None:
    ref = {"workloadName": "train", "templateName": "workers"}
    async with scheduling(pod_groups=("kubernetes",), levels=[LEAF]) as (_, client):
        await two_leaves(client)
        await client.create(kubernetes_podgroup("job", 2, workloadRef=ref))
        names = await members(client, "job", 2)
        await condition_is(client, "job", "False", "spec.workloadRef: Workload ml/train")
        template = {
            "name": "workers",
            "schedulingPolicy": {"gang": {"minCount": 2}},
            "schedulingConstraints": {"topology": [{"key": LEAF}]},
        }
        await client.create(
            Workload.model_validate(
                {
                    "metadata": {"name": "train", "namespace": NAMESPACE},
                    "spec": {"podGroupTemplates": [template]},
                }
            )
        )
        await condition_is(client, "job", "True", "2 pods bound")
        leaves = {node[0] for node in await nodes_of(client, names) if node}
        assert len(leaves) == 1  # the template's topology kept


async def test_preempted_pods_are_marked_disruption_targets_before_they_go() -> None:
    async with scheduling(pod_groups=("coscheduling",), levels=[LEAF]) as (_, client):
        await add_node(client, "a1", labels={LEAF: "a"})
        await client.create(coscheduling_podgroup("low", 1))
        low = pod(
            "low-0", gpus=8, scheduler=SCHEDULER, priority=0, pod_group=("coscheduling", "low")
        )
        await client.create(low)
        await eventually(lambda: _bound(client, "low-0"), what="the low-priority pod bound")
        since = (await client.get(Pod, "low-0", namespace=NAMESPACE)).metadata.resource_version
        await client.create(coscheduling_podgroup("high", 1))
        high = pod(
            "high-0", gpus=8, scheduler=SCHEDULER, priority=100, pod_group=("coscheduling", "high")
        )
        await client.create(high)

        async def terminating() -> bool:
            seen = await client.get(Pod, "low-0", namespace=NAMESPACE)
            return seen.metadata.deletion_timestamp is not None

        # With no kubelet, the pod deleted with its grace period stays, terminating.
        await eventually(terminating, what="low-0 evicted")
        victim = await client.get(Pod, "low-0", namespace=NAMESPACE)
        assert victim.status is not None
        marks = [c for c in victim.status.conditions if c.type == "DisruptionTarget"]
        assert [(c.status, c.reason) for c in marks] == [("True", "PreemptionByScheduler")]
        assert "Preempted by gang coscheduling/ml/high (priority 100)" in (marks[0].message or "")
        # The order, as the watch saw it: marked first, then deleted.
        changes = []
        async for event in client.watch(
            Pod, namespace=NAMESPACE, resource_version=since, timeout_seconds=5
        ):
            if event.type == "BOOKMARK" or event.object.metadata.name != "low-0":
                continue
            seen = event.object
            marked = any(
                c.type == "DisruptionTarget"
                for c in (seen.status.conditions if seen.status else [])
            )
            changes.append((marked, seen.metadata.deletion_timestamp is not None))
            if changes[-1][1]:
                break
        assert changes[-1] == (True, True)
        assert (True, False) in changes


async def _bound(client: Client, name: str) -> bool:
    return (await client.get(Pod, name, namespace=NAMESPACE)).spec.node_name is not None
