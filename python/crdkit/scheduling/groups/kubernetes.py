"""Kubernetes' own PodGroup (``scheduling.k8s.io/v1beta1``, `crdkit.resources.PodGroup`), built
into kube-apiserver v1.37 behind feature gates, and its adapter. A pod joins it through its
*spec*, ``spec.schedulingGroup.podGroupName``. There is no CRD: the apiserver serves it once
started with ``--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true
--runtime-config=scheduling.k8s.io/v1beta1=true``.

What the gang is asked for:

- ``spec.schedulingPolicy.gang.minCount``: the gang's minimum, all or nothing. A ``basic``
  policy is not a gang: its minimum is one pod, so its pods are placed as they fit, one at a
  time at worst, but together in the queue and under its topology constraint, which upstream
  applies to basic groups too.
- ``spec.schedulingConstraints.topology[0].key``: a ``required`` level of the placer: every pod
  in one domain of that node label. The key must be one of the scheduler's levels (or
  ``kubernetes.io/hostname``); a second constraint is refused, as the apiserver of v1.37 does.
- ``spec.priorityClassName`` (with ``spec.priority``, resolved by the apiserver): the pods must
  have the same class and priority; a group that names no class takes its pods' priority.
- ``spec.workloadRef``: the PodGroup was made from a template of a Workload. Where the PodGroup
  leaves ``schedulingConstraints`` or ``priorityClassName`` unset, the template's is used: the
  PodGroup is the instance, so its own fields win. A Workload or template that does not exist
  keeps the gang waiting, naming ``spec.workloadRef``.

A bad field is a ``ValueError`` naming it, which the scheduler turns into the waiting reason
``InvalidPodGroup``.

Status, through the ``status`` subresource: the ``PodGroupInitiallyScheduled`` condition
(``metav1.Condition``), ``False`` with reason ``Unschedulable`` and crdkit's reason and
explanation as its message while the gang waits, ``True`` (reason ``Scheduled``) once its
minimum is bound, and never back to ``False`` after that, as upstream defines it. Other
conditions (``DisruptionTarget``) are kept as they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from crdkit.placer.models import HOSTNAME_LEVEL
from crdkit.resources import KubernetesObject, PodGroup, Workload
from crdkit.scheduling.gangs import GangPolicy, PriorityRule
from crdkit.scheduling.groups.api import GroupApiName, GroupCounts, Waiting, now_text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crdkit.resources import Pod
    from crdkit.runtime.reconciler import RbacRule

__all__ = [
    "INITIALLY_SCHEDULED",
    "KUBERNETES_GATES",
    "KUBERNETES_GROUP",
    "KubernetesApi",
    "initially_scheduled",
]

KUBERNETES_GROUP = "scheduling.k8s.io"
INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
"""The condition type upstream defines for "the group's scheduling requirement was met"."""
KUBERNETES_GATES = (
    "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true "
    "--runtime-config=scheduling.k8s.io/v1beta1=true"
)
"""What kube-apiserver (v1.37 or later) needs to serve the API."""


def minimum(podgroup: Any) -> int:
    """The gang's minimum: ``gang.minCount``, or one pod for a ``basic`` group."""
    policy = podgroup.spec.scheduling_policy
    gang = policy.gang if policy is not None else None
    return max(gang.min_count or 1, 1) if gang is not None else 1


def initially_scheduled(
    current: Any, counts: GroupCounts, minimum: int, waiting: Waiting | None
) -> tuple[str, str, str] | None:
    """The ``PodGroupInitiallyScheduled`` condition as it should be, ``(status, reason,
    message)``, given the one the PodGroup has (``current``, or None); None: leave it."""
    if current is not None and current.status == "True":
        return None  # terminal upstream: a gang that lost pods is not "not scheduled" again
    placed = counts.bound + counts.succeeded
    if placed >= minimum:
        return "True", "Scheduled", f"{placed} pods bound, of the {minimum} the gang needs"
    if waiting is not None:
        return "False", "Unschedulable", f"{waiting[0]}: {waiting[1]}"
    return None


class KubernetesApi:
    """Kubernetes' PodGroup, with the template of the Workload it names as its companion."""

    name: ClassVar[GroupApiName] = "kubernetes"
    model: ClassVar[type[KubernetesObject] | None] = PodGroup
    rbac: ClassVar[tuple[RbacRule, ...]] = (
        (KUBERNETES_GROUP, "podgroups", ("get", "list", "watch")),
        (KUBERNETES_GROUP, "podgroups/status", ("get", "patch", "update")),
        (KUBERNETES_GROUP, "workloads", ("get", "list", "watch")),
    )
    status_subresource: ClassVar[bool] = True
    crd_file: ClassVar[str | None] = None  # built into kube-apiserver
    unserved_hint: ClassVar[str] = (
        f"turn it on in kube-apiserver v1.37+ (built in, no CRD: {KUBERNETES_GATES})"
    )
    companion: ClassVar[type[KubernetesObject] | None] = Workload

    def member_of(self, pod: Pod) -> str | None:
        group = pod.spec.scheduling_group
        return group.pod_group_name if group is not None and group.pod_group_name else None

    def companion_of(self, podgroup: Any) -> str | None:
        ref = podgroup.spec.workload_ref
        return ref.workload_name if ref is not None and ref.workload_name else None

    def policy(self, podgroup: Any, levels: Sequence[str], companion: Any = None) -> GangPolicy:
        spec = podgroup.spec
        template, where = _template(podgroup, companion)
        policy = spec.scheduling_policy
        if policy is None or (policy.gang is None) == (policy.basic is None):
            raise ValueError("spec.schedulingPolicy: exactly one of basic and gang must be set")
        if spec.scheduling_constraints is not None or template is None:
            constraints, field = spec.scheduling_constraints, "spec.schedulingConstraints"
        else:
            constraints, field = template.scheduling_constraints, f"{where}.schedulingConstraints"
        return GangPolicy(
            min_member=minimum(podgroup),
            topology=_topology(constraints, field, levels),
            priority=_priority(spec, template, where),
        )

    def status(
        self, podgroup: Any, counts: GroupCounts, binding: bool, waiting: Waiting | None
    ) -> dict[str, Any]:
        conditions = (podgroup.status.conditions if podgroup.status else None) or []
        current = next((c for c in conditions if c.type == INITIALLY_SCHEDULED), None)
        wanted = initially_scheduled(current, counts, minimum(podgroup), waiting)
        # A merge patch replaces the whole list: every condition is written back, others'
        # (DisruptionTarget) as they were.
        kept = [
            c.model_dump(by_alias=True, exclude_none=True, mode="json")
            for c in conditions
            if wanted is None or c.type != INITIALLY_SCHEDULED
        ]
        if wanted is None:
            return {"conditions": kept} if kept else {}
        status, reason, message = wanted
        stamp = (
            current.last_transition_time.isoformat().replace("+00:00", "Z")
            if current is not None and current.status == status and current.last_transition_time
            else now_text()
        )
        condition = {
            "type": INITIALLY_SCHEDULED,
            "status": status,
            "reason": reason,
            "message": message[:32768],  # metav1.Condition's limit
            "lastTransitionTime": stamp,
        }
        if podgroup.metadata.generation is not None:
            condition["observedGeneration"] = podgroup.metadata.generation
        return {"conditions": [*kept, condition]}


def _template(podgroup: Any, workload: Any) -> tuple[Any, str]:
    """The Workload template ``podgroup`` was made from and how to name it in a refusal; None
    without ``spec.workloadRef``. ``ValueError`` naming it when it does not exist."""
    ref = podgroup.spec.workload_ref
    if ref is None:
        return None, ""
    namespace = podgroup.metadata.namespace or "default"
    if workload is None:
        raise ValueError(
            f"spec.workloadRef: Workload {namespace}/{ref.workload_name} does not exist"
        )
    templates = workload.spec.pod_group_templates or []
    for template in templates:
        if template.name == ref.template_name:
            where = (
                f"Workload {namespace}/{ref.workload_name} "
                f"spec.podGroupTemplates[{ref.template_name}]"
            )
            return template, where
    names = ", ".join(str(t.name) for t in templates) or "none"
    raise ValueError(
        f"spec.workloadRef.templateName: Workload {namespace}/{ref.workload_name} has no "
        f"template {ref.template_name!r} ({names})"
    )


def _topology(constraints: Any, field: str, levels: Sequence[str]) -> dict[str, Any] | None:
    """The required level of a topology constraint: one domain of the key's node label."""
    topology = (constraints.topology if constraints is not None else None) or []
    if not topology:
        return None
    if len(topology) > 1:
        raise ValueError(
            f"{field}.topology: {len(topology)} constraints; a gang keeps to one domain, so "
            f"at most one is supported"
        )
    key = topology[0].key
    if not key:
        raise ValueError(f"{field}.topology[0].key: a node label key is required")
    if key not in levels and key != HOSTNAME_LEVEL:
        raise ValueError(
            f"{field}.topology[0].key: {key!r} is not one of the scheduler's levels "
            f"({', '.join(levels) or 'none'})"
        )
    return {"mode": "required", "level": key}


def _priority(spec: Any, template: Any, where: str) -> PriorityRule | None:
    """The priority the group's pods must have: the PodGroup's class (with the priority the
    apiserver resolved for it), else its template's; None when neither names a class."""
    if spec.priority_class_name:
        return PriorityRule("spec.priorityClassName", spec.priority_class_name, spec.priority)
    if template is not None and template.priority_class_name:
        return PriorityRule(
            f"{where}.priorityClassName", template.priority_class_name, template.priority
        )
    return None
