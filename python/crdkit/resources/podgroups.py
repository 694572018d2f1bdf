"""``scheduling.k8s.io/v1beta1`` PodGroup and Workload: Kubernetes' own gang API (kube-apiserver
v1.37 with the ``GenericWorkload`` feature gate and ``--runtime-config
scheduling.k8s.io/v1beta1=true``; ``schedulingConstraints`` also needs
``TopologyAwareWorkloadScheduling``).

A pod joins a PodGroup through its spec, ``spec.schedulingGroup.podGroupName``
(`crdkit.resources.PodSchedulingGroup`), not a label. A PodGroup may say which template of a
Workload it was made from (``spec.workloadRef``); the Workload holds the templates a
controller copies into the PodGroups it creates.

Only what a scheduler reads or writes is typed; every model keeps the fields it does not
declare, so a read-modify-write loses nothing. Optional fields default to None, so writing an
object back adds no field it did not have. The bounds typed here are the apiserver's own
(``minCount`` at least 1), so a bad object fails where it is built.
"""

# Annotations are evaluated at class creation (no `from __future__ import annotations`), so the
# names they use are runtime imports to pydantic and to the linter alike.
from pydantic import Field

from crdkit.resources._model import OpenModel, RawObject, Time
from crdkit.resources.object import KubernetesObject

__all__ = [
    "GangSchedulingPolicy",
    "PodGroup",
    "PodGroupCondition",
    "PodGroupSchedulingConstraints",
    "PodGroupSchedulingPolicy",
    "PodGroupSpec",
    "PodGroupStatus",
    "PodGroupTemplate",
    "TopologyConstraint",
    "Workload",
    "WorkloadReference",
    "WorkloadSpec",
]


class GangSchedulingPolicy(OpenModel):
    min_count: int | None = Field(default=None, ge=1)
    """The fewest pods that must be placeable together before any of them is bound."""


class PodGroupSchedulingPolicy(OpenModel):
    """Exactly one of ``basic`` (each pod on its own) and ``gang`` (all or nothing); the
    apiserver refuses a PodGroup with neither."""

    basic: RawObject | None = None
    """Empty today; kept as the JSON it is."""
    gang: GangSchedulingPolicy | None = None


class TopologyConstraint(OpenModel):
    key: str | None = None
    """The node label whose value every pod of the group must share (one domain)."""


class PodGroupSchedulingConstraints(OpenModel):
    topology: list[TopologyConstraint] | None = None
    """At most one constraint (the apiserver's limit in v1.37)."""


class WorkloadReference(OpenModel):
    workload_name: str | None = None
    """The Workload, in the PodGroup's namespace."""
    template_name: str | None = None
    """The entry of the Workload's ``podGroupTemplates`` the PodGroup was made from."""


class _PodGroupPolicy(OpenModel):
    """What a PodGroup and the Workload template it is made from both say of the group."""

    scheduling_policy: PodGroupSchedulingPolicy | None = None
    scheduling_constraints: PodGroupSchedulingConstraints | None = None
    priority_class_name: str | None = None
    priority: int | None = None
    """Resolved from ``priorityClassName`` by the apiserver's Priority admission plugin."""
    preemption_policy: str | None = None
    disruption_mode: RawObject | None = None
    resource_claims: list[RawObject] | None = None


class PodGroupSpec(_PodGroupPolicy):
    workload_ref: WorkloadReference | None = None
    parent_composite_pod_group_name: str | None = None


class PodGroupCondition(OpenModel):
    """A ``metav1.Condition``: the apiserver requires every field but ``observedGeneration``."""

    type: str | None = None
    status: str | None = None
    """``True``, ``False`` or ``Unknown``."""
    reason: str | None = None
    message: str | None = None
    last_transition_time: Time | None = None
    observed_generation: int | None = None


class PodGroupStatus(OpenModel):
    conditions: list[PodGroupCondition] | None = None
    """Known types: ``PodGroupInitiallyScheduled`` (True for good once the group was first
    scheduled) and ``DisruptionTarget`` (the group is about to be preempted)."""
    resource_claim_statuses: list[RawObject] | None = None


class PodGroup(
    KubernetesObject,
    group="scheduling.k8s.io",
    version="v1beta1",
    kind="PodGroup",
    plural="podgroups",
):
    """Kubernetes' PodGroup; its status is written through the ``status`` subresource."""

    spec: PodGroupSpec = Field(default_factory=PodGroupSpec)
    status: PodGroupStatus | None = None


class PodGroupTemplate(_PodGroupPolicy):
    """What a controller copies into each PodGroup it makes from a Workload."""

    name: str | None = None


class WorkloadSpec(OpenModel):
    controller_ref: RawObject | None = None
    """The object (a Job, a JobSet, ...) the Workload describes, as ``TypedLocalObjectReference``
    JSON."""
    pod_group_templates: list[PodGroupTemplate] | None = None
    composite_pod_group_templates: list[RawObject] | None = None


class Workload(
    KubernetesObject,
    group="scheduling.k8s.io",
    version="v1beta1",
    kind="Workload",
    plural="workloads",
):
    """The templates of a workload's PodGroups (it has no status)."""

    spec: WorkloadSpec = Field(default_factory=WorkloadSpec)
