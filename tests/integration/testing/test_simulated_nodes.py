"""Simulated nodes on the real apiserver: Ready, with their own taints only (the not-ready taint
the apiserver's admission adds to every new Node is gone)."""

from __future__ import annotations

import uuid

import pytest

from crdkit.client import Client
from crdkit.resources import Node
from crdkit.scheduling import node_entry
from crdkit.testing import create_nodes, simulated_node
from crdkit.testing.sim.nodes import NOT_READY_TAINT

pytestmark = pytest.mark.integration


async def test_created_nodes_are_ready_and_keep_only_their_own_taints(
    crdkit_client: Client,
) -> None:
    prefix = f"sim-{uuid.uuid4().hex[:6]}"
    gpu_taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    plain, tainted = await create_nodes(
        crdkit_client,
        [
            simulated_node(f"{prefix}-a", labels={"example.com/rack": "r1"}),
            simulated_node(f"{prefix}-b", taints=[gpu_taint]),
        ],
    )
    assert plain.spec.taints == []
    assert [(t.key, t.value, t.effect) for t in tainted.spec.taints] == [
        ("nvidia.com/gpu", "present", "NoSchedule")
    ]
    stored = await crdkit_client.get(Node, f"{prefix}-a")
    assert not any(t.key == NOT_READY_TAINT for t in stored.spec.taints)
    entry = node_entry(stored)
    assert entry["ready"] is True
    assert entry["allocatable"]["nvidia.com/gpu"] == "8"
    assert entry["labels"]["kubernetes.io/hostname"] == f"{prefix}-a"
    for node in (plain, tainted):
        await crdkit_client.delete(Node, node.metadata.name or "")


async def test_without_create_nodes_the_apiserver_taints_a_new_node_not_ready(
    crdkit_client: Client,
) -> None:
    """Why `create_nodes` exists: the admission's taint, on a node created as it is."""
    name = f"sim-{uuid.uuid4().hex[:6]}"
    created = await crdkit_client.create(simulated_node(name))
    assert any(t.key == NOT_READY_TAINT for t in created.spec.taints)
    await crdkit_client.delete(Node, name)
