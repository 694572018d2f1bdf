"""The placer: where a gang of pods goes, decided by the Rust core in `crdkit._placer`.

`Cluster` holds the nodes and their usage (in Rust) and answers `place(gang)` with a `Placement`;
`crdkit.placer.reference` is the same rules in pure Python. The input and output follow the
contract in docs/reference/placement-io.md.

The package is lazy (PEP 562): each name is imported from its module on first use, so that
`crdkit place` on a plainly valid document (`crdkit.placer.plain`) never loads pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit._placer import parse_quantity
    from crdkit.placer.cluster import Cluster, Policy, ReferenceCluster
    from crdkit.placer.models import (
        Assignment,
        ClusterSnapshot,
        Fit,
        Gang,
        NodeSpec,
        Placement,
        Slice,
        Taint,
        Task,
        Toleration,
        Topology,
    )
    from crdkit.placer.quantity import format_quantity

__all__ = [
    "Assignment",
    "Cluster",
    "ClusterSnapshot",
    "Fit",
    "Gang",
    "NodeSpec",
    "Placement",
    "Policy",
    "ReferenceCluster",
    "Slice",
    "Taint",
    "Task",
    "Toleration",
    "Topology",
    "format_quantity",
    "parse_quantity",
]

_HOMES = {
    "crdkit._placer": ("parse_quantity",),
    "crdkit.placer.cluster": ("Cluster", "Policy", "ReferenceCluster"),
    "crdkit.placer.models": (
        "Assignment",
        "ClusterSnapshot",
        "Fit",
        "Gang",
        "NodeSpec",
        "Placement",
        "Slice",
        "Taint",
        "Task",
        "Toleration",
        "Topology",
    ),
    "crdkit.placer.quantity": ("format_quantity",),
}
__getattr__, __dir__ = lazy_namespace(__name__, globals(), _HOMES)
