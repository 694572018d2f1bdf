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
    from crdkit._placer import parse_quantity as parse_quantity
    from crdkit.placer.cluster import Cluster as Cluster
    from crdkit.placer.cluster import Policy as Policy
    from crdkit.placer.cluster import ReferenceCluster as ReferenceCluster
    from crdkit.placer.models import Assignment as Assignment
    from crdkit.placer.models import ClusterSnapshot as ClusterSnapshot
    from crdkit.placer.models import Fit as Fit
    from crdkit.placer.models import Gang as Gang
    from crdkit.placer.models import NodeSpec as NodeSpec
    from crdkit.placer.models import Placement as Placement
    from crdkit.placer.models import Slice as Slice
    from crdkit.placer.models import Taint as Taint
    from crdkit.placer.models import Task as Task
    from crdkit.placer.models import Toleration as Toleration
    from crdkit.placer.models import Topology as Topology
    from crdkit.placer.quantity import format_quantity as format_quantity


__getattr__, __dir__ = lazy_namespace(__name__, globals())
