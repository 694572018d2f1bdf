"""The gang APIs a ``GangScheduler`` serves: one adapter each behind `GroupApi`, and this
registry, the only list of their names.

=================  =============================================  ============================
API                what makes a gang                               status written
=================  =============================================  ============================
``coscheduling``   scheduler-plugins' PodGroup                     ``status`` subresource:
                   (``scheduling.x-k8s.io/v1alpha1``): its         phase, counts,
                   ``minMember``                                   ``scheduleStartTime``
``volcano``        Volcano's PodGroup (``scheduling.volcano.sh``)  the object (its CRD has no
                   ``minMember``, ``minTaskMember``,               status subresource): phase,
                   ``networkTopology``                             counts, conditions
``kubernetes``     Kubernetes' PodGroup (``scheduling.k8s.io/``    ``status`` subresource: the
                   ``v1beta1``, built in, gated; pods join by      ``PodGroupInitiallyScheduled``
                   ``spec.schedulingGroup``): ``gang.minCount``,   condition
                   ``topology[0].key``, ``priorityClassName``,
                   and its Workload template's where unset
``pod``            a pod in no PodGroup: a gang of one             none
=================  =============================================  ============================

Adding an API is one module here (its models and its adapter, or its adapter alone for a
built-in kind modelled in `crdkit.resources`), one line in `GROUP_APIS`, and its upstream CRD
in ``crds/`` when it is one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crdkit.resources import Pod, resource_info
from crdkit.scheduling.groups.api import GroupApi, GroupApiName, GroupCounts, PodGroupApi
from crdkit.scheduling.groups.bare_pod import BarePodApi
from crdkit.scheduling.groups.coscheduling import CoschedulingApi
from crdkit.scheduling.groups.kubernetes import KubernetesApi
from crdkit.scheduling.groups.volcano import VolcanoApi

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "BARE_POD",
    "DEFAULT_POD_GROUP_APIS",
    "GROUP_APIS",
    "POD_GROUP_APIS",
    "GroupApi",
    "GroupApiName",
    "GroupCounts",
    "PodGroupApi",
    "group_api",
    "group_version",
    "pod_group_of",
]

GROUP_APIS: dict[str, GroupApi] = {
    api.name: api for api in (CoschedulingApi(), VolcanoApi(), KubernetesApi(), BarePodApi())
}
"""Every gang API by name, in the order a pod's membership is looked up (the coscheduling
label wins over Volcano's annotation, as the coscheduling plugin would hold the pod for its
group whatever the annotation says; both win over ``spec.schedulingGroup``, newer, so a pod
made for those schedulers keeps the gang it had)."""

POD_GROUP_APIS: tuple[PodGroupApi, ...] = tuple(
    name  # type: ignore[misc]
    for name, api in GROUP_APIS.items()
    if api.model is not None
)
"""The names of the APIs with a PodGroup object, in the order they are listed to users."""

DEFAULT_POD_GROUP_APIS: tuple[PodGroupApi, ...] = tuple(
    name for name in POD_GROUP_APIS if GROUP_APIS[name].crd_file is not None
)
"""What a ``GangScheduler`` watches when not told: the APIs that are CRDs. Kubernetes' own
PodGroup is off in kube-apiserver v1.37 unless its feature gate is on, and watching a kind the
cluster does not serve fails, so it is watched only when named, or once found served
(``crdkit scheduler``, `SchedulerOptions.pod_group_discovery`)."""

BARE_POD: GroupApiName = BarePodApi.name
"""The gang kind of a pod in no PodGroup."""


def group_api(name: str, *, field: str = "pod_groups") -> GroupApi:
    """The adapter of the PodGroup API ``name``; ``ValueError`` naming ``field`` for an
    unknown one."""
    api = GROUP_APIS.get(name)
    if api is None or api.model is None:
        raise ValueError(f"{field}: unknown PodGroup API {name!r} ({', '.join(POD_GROUP_APIS)})")
    return api


def group_version(api: GroupApi) -> tuple[str, str]:
    """The API group and version of ``api``'s PodGroup kind."""
    assert api.model is not None
    info = resource_info(api.model)
    return info.group, info.version


def pod_group_of(pod: Pod | Mapping[str, Any]) -> tuple[PodGroupApi, str] | None:
    """Which PodGroup ``pod`` (a ``Pod`` or its JSON) joins, by its label, annotation or
    ``spec.schedulingGroup``: the API and the group's name (in the pod's namespace). An empty
    name means no group, as upstream reads it."""
    if not isinstance(pod, Pod):
        pod = Pod.model_validate(pod)  # JSON is for tests and tools; the scheduler has Pods
    for name, api in GROUP_APIS.items():
        group = api.member_of(pod)
        if group:
            return name, group  # type: ignore[return-value]
    return None
