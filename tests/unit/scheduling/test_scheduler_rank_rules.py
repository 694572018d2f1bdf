"""``GangScheduler`` keeps one rank per node on the fake cluster: a gang's required
anti-affinity on the hostname spreads its own pods, keeps them off nodes that hold pods the
rule names, keeps other pods off nodes whose pods' rules name them, and holds between gangs
placed in the same pass."""

from __future__ import annotations

import asyncio
from typing import Any

from _fake_scheduling import NAMESPACE, add_node, gpu_pod, scheduling

from crdkit.client import Client
from crdkit.resources import Pod
from crdkit.scheduling.groups.coscheduling import COSCHEDULING_POD_GROUP_LABEL, CoschedulingPodGroup
from crdkit.testing import eventually
from factories import coscheduling_podgroup

HOST = "kubernetes.io/hostname"


def one_per_node(selector: dict[str, str]) -> dict[str, Any]:
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": HOST, "labelSelector": {"matchLabels": selector}}
            ]
        }
    }


def ranked(name: str, labels: dict[str, str], selector: dict[str, str] | None = None) -> Pod:
    """A one-GPU pod labelled ``labels``, with a rank rule over ``selector`` if given."""
    made = gpu_pod(name, 1, **({"affinity": one_per_node(selector)} if selector else {}))
    made.metadata.labels = dict(labels)
    return made


async def node_of(client: Client, name: str) -> str | None:
    return (await client.get(Pod, name, namespace=NAMESPACE)).spec.node_name


async def bound(client: Client, names: list[str]) -> list[str]:
    """The nodes of ``names`` once every one of them is bound."""
    found: list[str | None] = []

    async def all_bound() -> bool:
        found[:] = [await node_of(client, name) for name in names]
        return None not in found

    await eventually(all_bound, what=f"{', '.join(names)} bound")
    return [node for node in found if node is not None]


async def test_a_gangs_ranks_go_one_per_node_and_wait_for_enough_nodes() -> None:
    async with scheduling(pod_groups=("coscheduling",)) as (scheduler, client):
        await client.create(coscheduling_podgroup("llama", 3))
        for node in ("n1", "n2"):
            await add_node(client, node)
        labels = {COSCHEDULING_POD_GROUP_LABEL: "llama", "job": "llama"}
        names = [f"llama-{i}" for i in range(3)]
        for name in names:
            await client.create(ranked(name, labels, {"job": "llama"}))

        async def said_unschedulable() -> bool:
            found = await client.get(CoschedulingPodGroup, "llama", namespace=NAMESPACE)
            return found.status is not None and found.status.phase == "Pending"

        await eventually(said_unschedulable, what="the gang waiting")
        # Three one-GPU pods would fit on one node; one per node, two nodes are too few.
        assert [await node_of(client, name) for name in names] == [None, None, None]

        await add_node(client, "n3")
        assert sorted(await bound(client, names)) == ["n1", "n2", "n3"]
        assert scheduler.bound_gangs == 1


async def test_placed_pods_keep_ranks_off_their_nodes_both_ways() -> None:
    async with scheduling() as (_, client):
        for node in ("n1", "n2"):
            await add_node(client, node)
        # A pod of the job, placed first (a gang of one), on the fullest node it finds.
        await client.create(ranked("first", {"job": "llama"}))
        (taken,) = await bound(client, ["first"])
        # A rank of the same job may not share its node, though the node has 7 GPUs free.
        await client.create(ranked("second", {"job": "llama"}, {"job": "llama"}))
        (second,) = await bound(client, ["second"])
        assert second != taken
        # A pod its rule names (no rule of its own) keeps away from it too.
        await client.create(ranked("third", {"job": "llama"}))
        (third,) = await bound(client, ["third"])
        assert third != second


async def test_ranks_of_gangs_placed_in_one_pass_do_not_share_a_node() -> None:
    async with scheduling() as (_, client):
        await add_node(client, "n1")
        await add_node(client, "n2")
        names = [f"rank-{i}" for i in range(2)]
        # Two gangs of one (no PodGroup), created before the scheduler looks: the placer
        # would pack both onto one node, each blind to the other's rule.
        await asyncio.gather(
            *(client.create(ranked(name, {"job": "llama"}, {"job": "llama"})) for name in names)
        )
        nodes = await bound(client, names)
        assert sorted(nodes) == ["n1", "n2"]
