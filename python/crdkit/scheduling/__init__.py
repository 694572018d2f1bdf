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
- `GangScheduler`: all of it as a secondary scheduler for pods grouped by coscheduling,
  Volcano or Kubernetes' own PodGroups (``crdkit scheduler``, or
  ``manager.add_runnable(GangScheduler(...))``), told by `SchedulerOptions`; each gang API is
  one adapter (`GroupApi`, in ``GROUP_APIS``). Inside, it is kube-scheduler's shape: a queue,
  a pure cycle that returns decisions, plugins that own their state (reservations,
  preemption, reporting) and one dispatcher for every API call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit.scheduling.assumptions import PodBinding as PodBinding
    from crdkit.scheduling.assumptions import Reservation as Reservation
    from crdkit.scheduling.binder import Binder as Binder
    from crdkit.scheduling.binder import BindError as BindError
    from crdkit.scheduling.errors import SchedulingError as SchedulingError
    from crdkit.scheduling.explanation import Explanation as Explanation
    from crdkit.scheduling.explanation import TaskFilters as TaskFilters
    from crdkit.scheduling.explanation import explain as explain
    from crdkit.scheduling.gangs import GangPolicy as GangPolicy
    from crdkit.scheduling.gangs import GangRequest as GangRequest
    from crdkit.scheduling.gangs import build_gang as build_gang
    from crdkit.scheduling.gangs import tier_level as tier_level
    from crdkit.scheduling.groups import GROUP_APIS as GROUP_APIS
    from crdkit.scheduling.groups import POD_GROUP_APIS as POD_GROUP_APIS
    from crdkit.scheduling.groups import GroupApi as GroupApi
    from crdkit.scheduling.groups import pod_group_of as pod_group_of
    from crdkit.scheduling.groups.coscheduling import (
        COSCHEDULING_POD_GROUP_LABEL as COSCHEDULING_POD_GROUP_LABEL,
    )
    from crdkit.scheduling.groups.coscheduling import CoschedulingPodGroup as CoschedulingPodGroup
    from crdkit.scheduling.groups.volcano import (
        VOLCANO_GROUP_NAME_ANNOTATION as VOLCANO_GROUP_NAME_ANNOTATION,
    )
    from crdkit.scheduling.groups.volcano import VolcanoPodGroup as VolcanoPodGroup
    from crdkit.scheduling.mirror import ClusterMirror as ClusterMirror
    from crdkit.scheduling.mirror import pod_holds_capacity as pod_holds_capacity
    from crdkit.scheduling.mirror import pod_key as pod_key
    from crdkit.scheduling.nodes import node_entry as node_entry
    from crdkit.scheduling.nodes import node_ready as node_ready
    from crdkit.scheduling.options import SchedulerOptions as SchedulerOptions
    from crdkit.scheduling.own_gang import OWN_GANG_RBAC as OWN_GANG_RBAC
    from crdkit.scheduling.own_gang import GangOutcome as GangOutcome
    from crdkit.scheduling.own_gang import OwnGangs as OwnGangs
    from crdkit.scheduling.own_gang import WaitingForCapacity as WaitingForCapacity
    from crdkit.scheduling.own_gang import bindings_for as bindings_for
    from crdkit.scheduling.own_gang import gang_of as gang_of
    from crdkit.scheduling.pending import GroupRef as GroupRef
    from crdkit.scheduling.requests import format_quantity as format_quantity
    from crdkit.scheduling.requests import pod_requests as pod_requests
    from crdkit.scheduling.requests import requests_as_quantities as requests_as_quantities
    from crdkit.scheduling.scheduler import GangScheduler as GangScheduler
    from crdkit.scheduling.ui.server import ViewServer as ViewServer
    from crdkit.scheduling.view.snapshot import SchedulerView as SchedulerView
    from crdkit.scheduling.view.table import flex_table as flex_table

__getattr__, __dir__ = lazy_namespace(__name__, globals())
