"""Simulated nodes for a local control plane: Node objects as a kubelet would register them.

Nothing runs a kubelet next to the local control plane, so a test or demo that needs nodes
creates them through the API with their status already filled in (allocatable, a ``Ready``
condition). One more step is needed: the apiserver's TaintNodesByCondition admission gives
every new Node the ``node.kubernetes.io/not-ready:NoSchedule`` taint, which the node lifecycle
controller lifts once the kubelet reports Ready, and no such controller runs here. Left alone,
that taint makes every placement fail ("0/N nodes are available: N node(s) had untolerated
taint {node.kubernetes.io/not-ready: }"). `create_nodes` therefore sets each node's taints
back to the ones it was given.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from crdkit.resources import Node

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from crdkit.client import Client

__all__ = ["NOT_READY_TAINT", "create_nodes", "simulated_node"]

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
"""The taint the apiserver's admission puts on every new Node."""

GPU_NODE = {"cpu": "96", "memory": "1536Gi", "nvidia.com/gpu": "8", "pods": "110"}
"""What one simulated 8-GPU machine offers, by default."""


def simulated_node(
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    allocatable: Mapping[str, str | int] | None = None,
    ready: bool = True,
    taints: Iterable[Mapping[str, Any]] = (),
    unschedulable: bool = False,
) -> Node:
    """A Node as its kubelet would register it: ``allocatable`` (default: an 8-GPU machine,
    also its capacity), the hostname label, and a ``Ready`` condition."""
    offered = {k: str(v) for k, v in (GPU_NODE if allocatable is None else allocatable).items()}
    return Node.model_validate(
        {
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/hostname": name, **(labels or {})},
            },
            "spec": {"taints": [dict(t) for t in taints], "unschedulable": unschedulable},
            "status": {
                "capacity": offered,
                "allocatable": offered,
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True" if ready else "False",
                        "reason": "KubeletReady" if ready else "KubeletNotReady",
                    }
                ],
            },
        }
    )


async def create_nodes(
    client: Client, nodes: Iterable[Node], *, concurrency: int = 16
) -> list[Node]:
    """Create ``nodes`` and give each its own taints back (see the module docstring); the
    nodes as stored, in the order given."""
    gate = asyncio.Semaphore(concurrency)

    async def create(node: Node) -> Node:
        async with gate:
            await client.create(node)
            taints = [t.model_dump(by_alias=True, exclude_none=True) for t in node.spec.taints]
            return await client.patch(
                Node, node.metadata.name or "", {"spec": {"taints": taints or None}}
            )

    return list(await asyncio.gather(*(create(node) for node in nodes)))
