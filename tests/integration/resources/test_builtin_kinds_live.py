"""The typed built-in kinds round-trip the apiserver's objects losslessly.

Each kind is created from a manifest that sets typed fields and many the models do not declare;
the stored object is read through the typed model and written back unchanged. The apiserver
is the judge: the object it then stores equals the one before (so nothing was dropped or
rewritten), ``metadata.generation`` did not move (a spec change would bump it), and the typed
fields read what the manifest and the apiserver's defaulting put there.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from crdkit.client import Client, GroupVersionKind
from crdkit.resources import (
    CronJob,
    DaemonSet,
    Deployment,
    Job,
    KubernetesObject,
    PersistentVolumeClaim,
    PodDisruptionBudget,
    ReplicaSet,
    Service,
    ServiceAccount,
    StatefulSet,
    resource_info,
)

pytestmark = pytest.mark.integration

LABELS = {"app": "trainer", "crdkit.dev/role": "worker"}


def pod_template() -> dict[str, Any]:
    return {
        "metadata": {"labels": LABELS, "annotations": {"crdkit.dev/note": "kept"}},
        "spec": {
            "schedulerName": "gang-scheduler",
            "priorityClassName": "",
            "nodeSelector": {"crdkit.dev/pool": "gpu"},
            "tolerations": [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
            ],
            "terminationGracePeriodSeconds": 45,
            "containers": [
                {
                    "name": "trainer",
                    "image": "registry.example.com/trainer:1.2",
                    "args": ["--epochs", "3"],
                    "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
                    "ports": [{"name": "metrics", "containerPort": 9090}],
                    "resources": {
                        "requests": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "8"},
                        "limits": {"nvidia.com/gpu": "8"},
                    },
                    "readinessProbe": {"httpGet": {"path": "/ready", "port": "metrics"}},
                    "securityContext": {"runAsNonRoot": True, "allowPrivilegeEscalation": False},
                    "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}],
                }
            ],
            "volumes": [{"name": "scratch", "emptyDir": {"sizeLimit": "10Gi"}}],
        },
    }


def selector() -> dict[str, Any]:
    return {
        "matchLabels": {"app": "trainer"},
        "matchExpressions": [{"key": "crdkit.dev/role", "operator": "In", "values": ["worker"]}],
    }


MANIFESTS: dict[type[KubernetesObject], dict[str, Any]] = {
    Deployment: {
        "spec": {
            "replicas": 3,
            "selector": selector(),
            "template": pod_template(),
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%"}},
            "minReadySeconds": 5,
        }
    },
    StatefulSet: {
        "spec": {
            "serviceName": "trainers",
            "replicas": 2,
            "podManagementPolicy": "Parallel",
            "selector": selector(),
            "template": pod_template(),
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "ckpt"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "100Gi"}},
                    },
                }
            ],
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"},
        }
    },
    DaemonSet: {
        "spec": {
            "selector": selector(),
            "template": pod_template(),
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}},
        }
    },
    ReplicaSet: {"spec": {"replicas": 1, "selector": selector(), "template": pod_template()}},
    Job: {
        "spec": {
            "parallelism": 4,
            "completions": 4,
            "completionMode": "Indexed",
            "backoffLimitPerIndex": 1,
            "suspend": True,
            "ttlSecondsAfterFinished": 600,
            "podFailurePolicy": {
                "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
            },
            "template": {
                **pod_template(),
                "spec": {**pod_template()["spec"], "restartPolicy": "Never"},
            },
        }
    },
    CronJob: {
        "spec": {
            "schedule": "*/30 * * * *",
            "timeZone": "Etc/UTC",
            "concurrencyPolicy": "Forbid",
            "jobTemplate": {
                "metadata": {"labels": LABELS},
                "spec": {
                    "template": {
                        **pod_template(),
                        "spec": {**pod_template()["spec"], "restartPolicy": "OnFailure"},
                    }
                },
            },
        }
    },
    Service: {
        "spec": {
            "clusterIP": "None",
            "selector": {"app": "trainer"},
            "publishNotReadyAddresses": True,
            "ports": [
                {"name": "rdzv", "port": 29500, "targetPort": 29500},
                {"name": "metrics", "port": 9090, "targetPort": "metrics", "appProtocol": "http"},
            ],
        }
    },
    ServiceAccount: {
        "automountServiceAccountToken": False,
        "imagePullSecrets": [{"name": "registry"}],
    },
    PersistentVolumeClaim: {
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": "fast",
            "volumeMode": "Filesystem",
            "resources": {"requests": {"storage": "1Ti"}},
        }
    },
    PodDisruptionBudget: {
        "spec": {
            "maxUnavailable": "10%",
            "selector": selector(),
            "unhealthyPodEvictionPolicy": "AlwaysAllow",
        }
    },
}

VOLATILE = ("resourceVersion", "managedFields")


def comparable(raw: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(raw)
    for key in VOLATILE:
        data["metadata"].pop(key, None)
    return data


@pytest.mark.parametrize("kind", list(MANIFESTS), ids=lambda kind: kind.__name__)
async def test_a_stored_object_round_trips_through_its_model(
    crdkit_client: Client, namespace: str, kind: type[KubernetesObject]
) -> None:
    info = resource_info(kind)
    untyped = GroupVersionKind(info.group, info.version, info.kind)
    manifest = {
        "apiVersion": info.api_version,
        "kind": info.kind,
        "metadata": {"name": "rt", "namespace": namespace, "labels": LABELS},
        **MANIFESTS[kind],
    }
    await crdkit_client.create(copy.deepcopy(manifest))
    before: dict[str, Any] = await crdkit_client.get(untyped, "rt", namespace=namespace)

    typed = await crdkit_client.get(kind, "rt", namespace=namespace)
    await crdkit_client.replace(typed)
    after: dict[str, Any] = await crdkit_client.get(untyped, "rt", namespace=namespace)

    assert comparable(after) == comparable(before)
    assert after["metadata"].get("generation") == before["metadata"].get("generation")
    # and a model built from the stored JSON writes the same JSON it read (what a reconciler
    # sends on update), apart from empty collections the apiserver drops anyway
    assert prune_empty(kind.model_validate(before).to_dict()) == prune_empty(before)


def prune_empty(value: Any) -> Any:
    if isinstance(value, dict):
        pruned = {k: prune_empty(v) for k, v in value.items()}
        return {k: v for k, v in pruned.items() if v not in ({}, [])}
    if isinstance(value, list):
        return [prune_empty(v) for v in value]
    return value


async def test_typed_fields_read_what_the_apiserver_stored(
    crdkit_client: Client, namespace: str
) -> None:
    for kind in (Deployment, Service, Job, PodDisruptionBudget, StatefulSet):
        info = resource_info(kind)
        await crdkit_client.create(
            {
                "apiVersion": info.api_version,
                "kind": info.kind,
                "metadata": {"name": "typed", "namespace": namespace},
                **MANIFESTS[kind],
            }
        )
    deployment = await crdkit_client.get(Deployment, "typed", namespace=namespace)
    assert deployment.spec.replicas == 3
    assert deployment.spec.selector.match_expressions[0].values == ["worker"]
    container = deployment.spec.template.spec.containers[0]
    assert container.resources.requests["nvidia.com/gpu"] == "8"
    assert deployment.spec.strategy is not None
    assert deployment.spec.strategy.rolling_update is not None
    assert deployment.spec.strategy.rolling_update.max_surge == "50%"
    # defaulted by the apiserver
    assert deployment.spec.strategy.rolling_update.max_unavailable == "25%"
    assert deployment.spec.revision_history_limit == 10

    service = await crdkit_client.get(Service, "typed", namespace=namespace)
    assert service.spec.cluster_ip == "None"
    assert service.spec.cluster_ips == ["None"]
    assert [(p.name, p.target_port) for p in service.spec.ports] == [
        ("rdzv", 29500),
        ("metrics", "metrics"),
    ]
    assert service.spec.type == "ClusterIP"

    job = await crdkit_client.get(Job, "typed", namespace=namespace)
    assert (job.spec.completion_mode, job.spec.suspend, job.spec.parallelism) == (
        "Indexed",
        True,
        4,
    )
    assert job.spec.template.spec.restart_policy == "Never"

    budget = await crdkit_client.get(PodDisruptionBudget, "typed", namespace=namespace)
    assert budget.spec.max_unavailable == "10%"
    assert budget.spec.min_available is None

    stateful = await crdkit_client.get(StatefulSet, "typed", namespace=namespace)
    assert stateful.spec.service_name == "trainers"
    claim = stateful.spec.volume_claim_templates[0]
    assert claim.spec.resources.requests["storage"] == "100Gi"
