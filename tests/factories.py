"""Builders of the objects the tests make: Pods, Nodes, the three PodGroup kinds, and the placer's
node, task and gang dicts (docs/reference/placement-io.md). Keyword arguments name what a test
cares about; the rest has the value most tests want. Imported by module name (this folder is on
``sys.path``, through tests/conftest.py).

Only plain objects are made here: what runs something (a scheduler on the fake cluster, a
scripted informer, a slow client) is in the fakes' own modules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ParamSpec

from crdkit.resources import Node, Pod, PodGroup
from crdkit.scheduling.groups import PodGroupApi
from crdkit.scheduling.groups.coscheduling import COSCHEDULING_POD_GROUP_LABEL, CoschedulingPodGroup
from crdkit.scheduling.groups.volcano import VOLCANO_GROUP_NAME_ANNOTATION, VolcanoPodGroup

GPU = "nvidia.com/gpu"
NAMESPACE = "ml"
"""The namespace pods and PodGroups are made in unless told."""

P = ParamSpec("P")

# -- pods ----------------------------------------------------------------------------------


def pod_json(
    name: str | None = "p",
    *,
    namespace: str | None = NAMESPACE,
    node: str | None = None,
    gpus: int | str | None = None,
    requests: Mapping[str, Any] | None = None,
    limits: Mapping[str, Any] | None = None,
    container: str | None = "c",
    image: str | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    pod_group: tuple[PodGroupApi, str] | None = None,
    scheduler: str | None = None,
    priority: int | None = None,
    phase: str | None = None,
    status: Mapping[str, Any] | None = None,
    uid: str | None = None,
    resource_version: str | None = None,
    created: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A Pod as the apiserver's JSON, with only the fields asked for.

    One container named ``container`` (None: no container unless ``containers`` is given),
    with ``image``, and ``requests`` and ``gpus`` (``nvidia.com/gpu``, 0 included) as its
    requests and ``limits`` as its limits. ``pod_group``: the PodGroup it joins, as
    `pod_group_of` reads it (the coscheduling label or Volcano's annotation). ``status`` is
    written as given, with ``phase`` in it; ``spec``: more fields of the spec (camelCase), a
    ``containers`` among them in place of the one container.
    """
    labels = dict(labels) if labels is not None else None
    annotations = dict(annotations) if annotations is not None else None
    if pod_group is not None:
        api, group = pod_group
        if api == "coscheduling":
            labels = {**(labels or {}), COSCHEDULING_POD_GROUP_LABEL: group}
        elif api == "kubernetes":
            spec = {**spec, "schedulingGroup": {"podGroupName": group}}
        else:
            annotations = {**(annotations or {}), VOLCANO_GROUP_NAME_ANNOTATION: group}
    metadata: dict[str, Any] = {}
    for key, value in (
        ("name", name),
        ("namespace", namespace),
        ("uid", uid),
        ("resourceVersion", resource_version),
        ("creationTimestamp", created),
        ("labels", labels),
        ("annotations", annotations),
    ):
        if value is not None:
            metadata[key] = value
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata}
    fields: dict[str, Any] = {}
    if scheduler is not None:
        fields["schedulerName"] = scheduler
    if node is not None:
        fields["nodeName"] = node
    if priority is not None:
        fields["priority"] = priority
    if container is not None:
        fields["containers"] = [
            _container(container, image, gpus=gpus, requests=requests, limits=limits)
        ]
    body["spec"] = {**fields, **spec}
    if status is not None or phase is not None:
        body["status"] = {**(status or {}), **({"phase": phase} if phase is not None else {})}
    return body


def _container(
    name: str,
    image: str | None,
    *,
    gpus: int | str | None,
    requests: Mapping[str, Any] | None,
    limits: Mapping[str, Any] | None,
) -> dict[str, Any]:
    made: dict[str, Any] = {"name": name}
    if image is not None:
        made["image"] = image
    resources: dict[str, Any] = {}
    if requests is not None or gpus is not None:
        resources["requests"] = {
            **(requests or {}),
            **({GPU: str(gpus)} if gpus is not None else {}),
        }
    if limits is not None:
        resources["limits"] = dict(limits)
    if resources:
        made["resources"] = resources
    return made


def _typed(build: Callable[P, dict[str, Any]]) -> Callable[P, Pod]:
    def typed(*args: P.args, **kwargs: P.kwargs) -> Pod:
        return Pod.model_validate(build(*args, **kwargs))

    return typed


pod = _typed(pod_json)
"""`pod_json`'s pod, typed: the same arguments."""


# -- nodes ---------------------------------------------------------------------------------


def node(
    name: str | None = "n1",
    rack: str | None = "r1",
    *,
    labels: Mapping[str, str] | None = None,
    gpus: int | str = 8,
    cpu: int | str | None = None,
    pods: int | str | None = 110,
    allocatable: Mapping[str, Any] | None = None,
    ready: bool = True,
    status: Mapping[str, Any] | None = None,
    **spec: Any,
) -> Node:
    """A Ready Node in ``rack`` (the label ``rack``; None: no such label) with ``labels`` too.

    Allocatable: ``cpu`` (when given), ``gpus`` GPUs and room for ``pods`` pods (None: no
    limit), or ``allocatable`` as given. ``status`` replaces the whole status; ``spec``: the
    spec's fields (camelCase: ``taints``, ``unschedulable``).
    """
    metadata: dict[str, Any] = {} if name is None else {"name": name}
    every_label = {**({"rack": rack} if rack is not None else {}), **(labels or {})}
    if every_label:
        metadata["labels"] = every_label
    if allocatable is None:
        allocatable = {
            **({"cpu": str(cpu)} if cpu is not None else {}),
            GPU: str(gpus),
            **({"pods": str(pods)} if pods is not None else {}),
        }
    if status is None:
        status = {
            "allocatable": dict(allocatable),
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        }
    body: dict[str, Any] = {"metadata": metadata, "status": status}
    if spec:
        body["spec"] = spec
    return Node.model_validate(body)


# -- PodGroups -----------------------------------------------------------------------------


def coscheduling_podgroup(
    name: str, min_member: int, *, namespace: str = NAMESPACE, **spec: Any
) -> CoschedulingPodGroup:
    """scheduler-plugins' PodGroup ``name`` of ``min_member`` pods; ``spec``: more of its
    spec (camelCase: ``scheduleTimeoutSeconds``, ``minResources``)."""
    return CoschedulingPodGroup.model_validate(
        {
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minMember": min_member, **spec},
        }
    )


def volcano_podgroup(
    name: str,
    min_member: int,
    *,
    namespace: str = NAMESPACE,
    tier: int | None = None,
    **spec: Any,
) -> VolcanoPodGroup:
    """Volcano's PodGroup ``name`` of ``min_member`` pods, held within network tier ``tier``
    (``hard``) when given; ``spec``: more of its spec (camelCase: ``queue``)."""
    fields: dict[str, Any] = {"minMember": min_member, **spec}
    if tier is not None:
        fields["networkTopology"] = {"mode": "hard", "highestTierAllowed": tier}
    return VolcanoPodGroup.model_validate(
        {"metadata": {"name": name, "namespace": namespace}, "spec": fields}
    )


def kubernetes_podgroup(
    name: str,
    min_count: int | None,
    *,
    namespace: str = NAMESPACE,
    topology: str | None = None,
    **spec: Any,
) -> PodGroup:
    """Kubernetes' PodGroup ``name``: a gang of ``min_count`` pods (None: a ``basic`` group),
    in one domain of node label ``topology`` when given; ``spec``: more of its spec
    (camelCase: ``priorityClassName``, ``workloadRef``)."""
    policy = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    fields: dict[str, Any] = {"schedulingPolicy": policy, **spec}
    if topology is not None:
        fields["schedulingConstraints"] = {"topology": [{"key": topology}]}
    return PodGroup.model_validate(
        {"metadata": {"name": name, "namespace": namespace}, "spec": fields}
    )


# -- the placer's input ---------------------------------------------------------------------


def placer_node(
    name: str,
    labels: Mapping[str, str] | None = None,
    *,
    cpu: int | str | None = "96",
    memory: str | None = None,
    gpus: int = 8,
    pods: int | None = 110,
    used: Mapping[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A node of the placer's cluster snapshot: ``cpu``, ``memory`` and ``pods`` allocatable
    when not None, ``gpus`` GPUs, ``used`` when given; ``extra``: more fields, or in place of
    those (``allocatable``, ``taints``, ``ready``)."""
    allocatable: dict[str, Any] = {}
    if cpu is not None:
        allocatable["cpu"] = cpu
    if memory is not None:
        allocatable["memory"] = memory
    allocatable[GPU] = gpus
    if pods is not None:
        allocatable["pods"] = pods
    made: dict[str, Any] = {"name": name, "labels": dict(labels or {}), "allocatable": allocatable}
    if used is not None:
        made["used"] = dict(used)
    return {**made, **extra}


def task(name: str = "w", replicas: int = 1, gpus: int | str = 1, **extra: Any) -> dict[str, Any]:
    """A task of a gang: ``replicas`` pods of ``gpus`` GPUs each; ``extra``: more fields
    (``minAvailable``, ``slice``, ...), or ``requests`` in place of the GPUs."""
    return {"name": name, "replicas": replicas, "requests": {GPU: gpus}, **extra}


def gang(*tasks: dict[str, Any], name: str = "g", **extra: Any) -> dict[str, Any]:
    """A gang of ``tasks``; ``extra``: more fields (``topology``, ``priority``, ...)."""
    return {"name": name, "tasks": list(tasks), **extra}


# -- kubeconfigs -----------------------------------------------------------------------------


def kubeconfig(
    user: Mapping[str, Any],
    contexts: Mapping[str, Mapping[str, Any]],
    **cluster: Any,
) -> dict[str, Any]:
    """A kubeconfig of one cluster ``c`` (at https://127.0.0.1:6443, plus ``cluster``'s
    fields) and one user ``u`` (``user``'s fields), with ``contexts`` by name; ``main`` is
    the current one."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443", **cluster}}],
        "users": [{"name": "u", "user": dict(user)}],
        "contexts": [{"name": name, "context": dict(body)} for name, body in contexts.items()],
        "current-context": "main",
    }
