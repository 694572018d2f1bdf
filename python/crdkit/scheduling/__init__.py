"""crdkit.scheduling: topology-aware gang scheduling on a live cluster.

::

    Node, Pod informers ─▶ ClusterMirror ─▶ placer Cluster (Rust: the only usage ledger)
                                 │ place / place_all
    pending pods + PodGroup ─▶ build_gang ─▶ Placement ─▶ Binder (all or nothing, rollback)
                                 │ unschedulable
                                 ▼
                           explain ─▶ PodGroup status, FailedScheduling Events

- `ClusterMirror`: Nodes and Pods kept in the placer's state event by event, with
  kube-scheduler's assume cache (assume at decision, confirm on the pod's event, expire).
- `pod_requests`: a pod's effective request, as kube-scheduler computes it.
- `Binder`: binds an existing gang (``pods/binding``) or creates it bound; all or nothing.
- `explain`: what filtered a gang's nodes, and "never fits this cluster" versus "not now".
- `OwnGangs`: for an operator that makes its own pods: place a gang and create it bound in one
  call (`place_and_create`), and reconcile the gangs that did not fit when room frees
  (`WaitingForCapacity`); `gang_of` and `bindings_for` are its two halves.
- `GangScheduler`: all of it as a secondary scheduler for pods grouped by coscheduling or
  Volcano PodGroups (``crdkit scheduler``, or ``manager.add_runnable(GangScheduler(...))``),
  told by `SchedulerOptions`; each gang API is one adapter (`GroupApi`, in ``GROUP_APIS``).
  Inside, it is kube-scheduler's shape: a queue, a pure cycle that returns decisions, plugins
  that own their state (reservations, preemption, reporting) and one dispatcher for every API
  call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit.scheduling.assumptions import PodBinding, Reservation
    from crdkit.scheduling.binder import Binder, BindError
    from crdkit.scheduling.errors import SchedulingError
    from crdkit.scheduling.explanation import Explanation, TaskFilters, explain
    from crdkit.scheduling.gangs import GangPolicy, GangRequest, build_gang, tier_level
    from crdkit.scheduling.groups import GROUP_APIS, POD_GROUP_APIS, GroupApi, pod_group_of
    from crdkit.scheduling.groups.coscheduling import (
        COSCHEDULING_POD_GROUP_LABEL,
        CoschedulingPodGroup,
    )
    from crdkit.scheduling.groups.volcano import VOLCANO_GROUP_NAME_ANNOTATION, VolcanoPodGroup
    from crdkit.scheduling.mirror import ClusterMirror, pod_holds_capacity, pod_key
    from crdkit.scheduling.nodes import node_entry, node_ready
    from crdkit.scheduling.options import SchedulerOptions
    from crdkit.scheduling.own_gang import (
        OWN_GANG_RBAC,
        GangOutcome,
        OwnGangs,
        WaitingForCapacity,
        bindings_for,
        gang_of,
    )
    from crdkit.scheduling.pending import GroupRef
    from crdkit.scheduling.requests import format_quantity, pod_requests, requests_as_quantities
    from crdkit.scheduling.scheduler import GangScheduler

_HOMES = {
    "crdkit.scheduling.errors": ("SchedulingError",),
    "crdkit.scheduling.assumptions": ("PodBinding", "Reservation"),
    "crdkit.scheduling.binder": ("BindError", "Binder"),
    "crdkit.scheduling.explanation": ("Explanation", "TaskFilters", "explain"),
    "crdkit.scheduling.gangs": ("GangPolicy", "GangRequest", "build_gang", "tier_level"),
    "crdkit.scheduling.mirror": ("ClusterMirror", "pod_holds_capacity", "pod_key"),
    "crdkit.scheduling.nodes": ("node_entry", "node_ready"),
    "crdkit.scheduling.own_gang": (
        "OWN_GANG_RBAC",
        "GangOutcome",
        "OwnGangs",
        "WaitingForCapacity",
        "bindings_for",
        "gang_of",
    ),
    "crdkit.scheduling.groups.coscheduling": (
        "COSCHEDULING_POD_GROUP_LABEL",
        "CoschedulingPodGroup",
    ),
    "crdkit.scheduling.groups.volcano": ("VOLCANO_GROUP_NAME_ANNOTATION", "VolcanoPodGroup"),
    "crdkit.scheduling.requests": ("format_quantity", "pod_requests", "requests_as_quantities"),
    "crdkit.scheduling.groups": ("GROUP_APIS", "POD_GROUP_APIS", "GroupApi", "pod_group_of"),
    "crdkit.scheduling.options": ("SchedulerOptions",),
    "crdkit.scheduling.pending": ("GroupRef",),
    "crdkit.scheduling.scheduler": ("GangScheduler",),
}
__getattr__, __dir__ = lazy_namespace(__name__, globals(), _HOMES)

__all__ = [
    "COSCHEDULING_POD_GROUP_LABEL",
    "GROUP_APIS",
    "OWN_GANG_RBAC",
    "POD_GROUP_APIS",
    "VOLCANO_GROUP_NAME_ANNOTATION",
    "BindError",
    "Binder",
    "ClusterMirror",
    "CoschedulingPodGroup",
    "Explanation",
    "GangOutcome",
    "GangPolicy",
    "GangRequest",
    "GangScheduler",
    "GroupApi",
    "GroupRef",
    "OwnGangs",
    "PodBinding",
    "Reservation",
    "SchedulerOptions",
    "SchedulingError",
    "TaskFilters",
    "VolcanoPodGroup",
    "WaitingForCapacity",
    "bindings_for",
    "build_gang",
    "explain",
    "format_quantity",
    "gang_of",
    "node_entry",
    "node_ready",
    "pod_group_of",
    "pod_holds_capacity",
    "pod_key",
    "pod_requests",
    "requests_as_quantities",
    "tier_level",
]
