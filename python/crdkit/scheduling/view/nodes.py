"""The nodes as the view shows them: where each sits in the topology, how much of the shown
resource it has, which job holds each part of it, and the gang a reservation holds it for.

Read from the scheduler's mirror (`crdkit.scheduling.mirror`), so a node shows what the
scheduler counts, assumed binds included: the page is the scheduler's view, not the kubelet's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit.placer.quantity import parse_quantity

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from crdkit.scheduling.mirror import ClusterMirror
    from crdkit.scheduling.view.format import JobShare, NodeView, TimelinePoint

__all__ = ["node_views", "timeline_point", "whole_units"]


def whole_units(quantity: object) -> int:
    """A resource quantity (``"8"``, ``"1500m"``, 8) in whole units, rounded down; 0 for one
    that does not parse (a node's allocatable is the kubelet's, not crdkit's, to check)."""
    try:
        return parse_quantity(quantity) // 1000  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0


def node_views(
    mirror: ClusterMirror,
    levels: Sequence[str],
    resource: str,
    job_of: Callable[[str], str],
    held_for: Mapping[str, str],
) -> list[NodeView]:
    """Every node of ``mirror``, in topology order (each level's value, then the name).

    ``job_of(pod key)`` names the job a counted pod belongs to; ``held_for`` maps a hold's
    value (a node's `ClusterMirror.holder`) to the gang it is held for: a hold of no gang
    there (settling's) marks no node.
    """
    views: list[NodeView] = []
    for entry in mirror.nodes():
        name = entry["name"]
        labels = entry.get("labels") or {}
        jobs: dict[str, int] = {}
        for key in mirror.pods_on(name):
            amount = (mirror.requests_of(key) or {}).get(resource, 0) // 1000
            if amount:
                job = job_of(key)
                jobs[job] = jobs.get(job, 0) + amount
        hold = mirror.holder(name)
        shares: list[JobShare] = [{"job": job, "amount": jobs[job]} for job in sorted(jobs)]
        views.append(
            {
                "name": name,
                "path": [str(labels.get(level, "")) for level in levels],
                "capacity": whole_units((entry.get("allocatable") or {}).get(resource, 0)),
                "ready": bool(entry.get("ready", True)),
                "jobs": shares,
                "held": None if hold is None else held_for.get(hold),
            }
        )
    views.sort(key=lambda view: (view["path"], view["name"]))
    return views


def timeline_point(
    now: float, nodes: Sequence[NodeView], running: Mapping[str, int]
) -> TimelinePoint:
    """The resource on held nodes, in fully bound gangs (``running``: gang to amount), and
    in all, at ``now``."""
    return {
        "t": now,
        "held": sum(node["capacity"] for node in nodes if node["held"] is not None),
        "bound": sum(running.values()),
        "total": sum(node["capacity"] for node in nodes),
    }
