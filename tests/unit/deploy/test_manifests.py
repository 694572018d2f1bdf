from __future__ import annotations

from typing import Any

import pytest
from examples.hello.operator import Hello, HelloReconciler

from crdkit.deploy import ManifestOptions, crd_classes, operator_manifests, run_arguments
from crdkit.resources import ApiModel, ConfigMap, CustomResource
from crdkit.runtime import Context, Reconciler


class PoolSpec(ApiModel):
    size: int = 1


class Pool(CustomResource, group="deploy.example.com", version="v1alpha1"):
    spec: PoolSpec


class PoolV1(Pool, version="v1", storage=True):
    pass


class Unrelated(CustomResource, group="deploy.example.com", version="v1"):
    spec: PoolSpec


class PoolReconciler(Reconciler[PoolV1]):
    owns = (ConfigMap, Hello)

    async def reconcile(self, ctx: Context, obj: PoolV1) -> None:
        return None


def options(**changes: Any) -> ManifestOptions:
    return ManifestOptions(
        name="pool", image="example.com/pool:1", references=("m:PoolReconciler",), **changes
    )


def test_the_crds_are_every_version_of_the_custom_kinds_used() -> None:
    assert crd_classes([PoolReconciler]) == sorted(
        [Hello, Pool, PoolV1], key=lambda c: (c.__module__, c.__qualname__)
    )
    assert crd_classes([HelloReconciler]) == [Hello]


def test_the_manager_runs_with_the_options_the_roles_were_made_for() -> None:
    assert run_arguments(options()) == [
        "crdkit",
        "run",
        "m:PoolReconciler",
        "--leader-elect",
        "--leader-election-id",
        "pool-leader",
        "--leader-election-namespace",
        "pool-system",
        "--metrics-bind-address",
        ":8443",
        "--metrics-secure",
        "--health-probe-bind-address",
        ":8081",
    ]
    watched = run_arguments(
        options(watch_namespace="ml", leader_elect=False, run_options=("size=3",))
    )
    assert watched[3:5] == ["--namespace", "ml"]
    assert "--leader-elect" not in watched
    assert watched[-2:] == ["--option", "size=3"]


def test_the_layout_is_kubebuilders() -> None:
    files = operator_manifests([PoolReconciler], options())
    assert sorted(files) == [
        "crd/bases/deploy.example.com_pools.yaml",
        "crd/bases/hello.example.com_hellos.yaml",
        "crd/kustomization.yaml",
        "default/kustomization.yaml",
        "manager/kustomization.yaml",
        "manager/manager.yaml",
        "metrics/kustomization.yaml",
        "metrics/service.yaml",
        "rbac/kustomization.yaml",
        "rbac/leader_election_role.yaml",
        "rbac/metrics_auth_role.yaml",
        "rbac/metrics_reader_role.yaml",
        "rbac/role.yaml",
        "rbac/service_account.yaml",
    ]
    [pools] = files["crd/bases/deploy.example.com_pools.yaml"]
    assert [v["name"] for v in pools["spec"]["versions"]] == ["v1", "v1alpha1"]
    assert files["crd/kustomization.yaml"][0]["resources"] == [
        "bases/deploy.example.com_pools.yaml",
        "bases/hello.example.com_hellos.yaml",
    ]
    election = files["rbac/leader_election_role.yaml"]
    assert [(d["kind"], d["metadata"]["namespace"]) for d in election] == [
        ("Role", "pool-system"),
        ("RoleBinding", "pool-system"),
    ]
    assert election[1]["subjects"] == [
        {"kind": "ServiceAccount", "name": "pool-controller-manager", "namespace": "pool-system"}
    ]


def test_the_manager_pod_meets_the_restricted_pod_security_standard() -> None:
    namespace, deployment = operator_manifests([PoolReconciler], options())["manager/manager.yaml"]
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 65532,
        "runAsGroup": 65532,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    [container] = pod["containers"]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert set(container["resources"]) == {"requests", "limits"}
    assert container["command"] == run_arguments(options())


def test_without_leader_election_there_is_no_lease_role() -> None:
    files = operator_manifests([PoolReconciler], options(leader_elect=False, metrics_secure=False))
    assert "rbac/leader_election_role.yaml" not in files
    assert files["rbac/kustomization.yaml"][0]["resources"] == [
        "service_account.yaml",
        "role.yaml",
    ]


def test_secure_metrics_get_their_roles_and_plain_ones_do_not() -> None:
    files = operator_manifests([PoolReconciler], options())
    auth, binding = files["rbac/metrics_auth_role.yaml"]
    assert auth["rules"] == [
        {
            "apiGroups": ["authentication.k8s.io"],
            "resources": ["tokenreviews"],
            "verbs": ["create"],
        },
        {
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["subjectaccessreviews"],
            "verbs": ["create"],
        },
    ]
    assert binding["subjects"][0]["name"] == "pool-controller-manager"
    [reader] = files["rbac/metrics_reader_role.yaml"]
    assert reader["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    [service] = files["metrics/service.yaml"]
    assert service["spec"]["ports"][0]["port"] == 8443

    plain = operator_manifests([PoolReconciler], options(metrics_secure=False))
    assert "rbac/metrics_auth_role.yaml" not in plain
    command = plain["manager/manager.yaml"][1]["spec"]["template"]["spec"]["containers"][0][
        "command"
    ]
    assert "--metrics-secure" not in command
    assert command[command.index("--metrics-bind-address") + 1] == ":8080"


def test_a_sharded_operator_runs_every_pod_as_a_shard_with_the_rings_leases() -> None:
    sharded = options(leader_elect=False, sharded=True, replicas=3)
    args = run_arguments(sharded)
    assert "--leader-elect" not in args
    at = args.index("--shards")
    assert args[at : at + 3] == ["--shards", "--leader-election-namespace", "pool-system"]
    assert "--shard-id" not in args  # each pod's name, its host name, is its shard id
    files = operator_manifests([PoolReconciler], sharded)
    (role,) = files["rbac/leader_election_role.yaml"][:1]
    assert role["metadata"] == {"name": "pool-leader-election", "namespace": "pool-system"}
    assert role["rules"] == [
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "verbs": ["create", "get", "list", "update", "watch"],
        }
    ]
    deployment = next(d for d in files["manager/manager.yaml"] if d["kind"] == "Deployment")
    assert deployment["spec"]["replicas"] == 3


def test_sharding_and_leader_election_are_refused_together() -> None:
    with pytest.raises(ValueError, match="--shards replaces --leader-elect"):
        options(sharded=True)
