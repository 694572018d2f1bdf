"""Unit tests of the least-privilege RBAC rules and where each is granted."""

from __future__ import annotations

from typing import Any

import pytest

from crdkit import Reconciler, Request
from crdkit.deploy.rbac import (
    cluster_role,
    cluster_role_binding,
    rbac_documents,
    rbac_rules,
    role_binding,
)
from crdkit.resources import ConfigMap, CustomResource, Lease, Node, Pod
from crdkit.runtime.client_role import ClientRole
from crdkit.runtime.manager_options import default_leader_election_id
from crdkit.runtime.runnable import Runnable


class Job(CustomResource, group="batch.example.com", version="v1", kind="Job"):
    pass


class Pool(CustomResource, group="batch.example.com", version="v1", scope="Cluster"):
    pass


def to_jobs(node: Any) -> list[Request]:
    return []


class JobReconciler(Reconciler[Job]):
    owns = (Pod,)
    watches = ((Node, to_jobs),)
    rbac = (("", "pods/binding", ["create"]), ("example.com", "gadgets", ["get"]))


class ConfigReconciler(Reconciler[ConfigMap]):
    owns = (Pod,)


class PoolReconciler(Reconciler[Pool]):
    owns = (ConfigMap,)


def by_resource(rules: list[dict[str, Any]]) -> dict[tuple[str, str], list[str]]:
    return {(r["apiGroups"][0], r["resources"][0]): r["verbs"] for r in rules}


JOB_RULES = {
    ("batch.example.com", "jobs"): ["get", "list", "watch", "update", "patch"],
    ("batch.example.com", "jobs/status"): ["get", "update", "patch"],
    ("batch.example.com", "jobs/finalizers"): ["update"],
    ("", "pods"): ["get", "list", "watch", "create", "update", "patch", "delete"],
    ("", "pods/binding"): ["create"],
    ("events.k8s.io", "events"): ["create", "patch"],
    ("", "events"): ["create", "patch"],
}
CLUSTER_SCOPED = {
    ("", "nodes"): ["get", "list", "watch"],
    ("example.com", "gadgets"): ["get"],  # no class for it: its scope is unknown
}


def test_cluster_wide_rules_follow_declarations_and_leave_leases_out() -> None:
    rules = rbac_rules([JobReconciler])
    assert list(rules) == [""]
    assert by_resource(rules[""]) == {**JOB_RULES, **CLUSTER_SCOPED}


def test_a_namespace_keeps_namespaced_kinds_in_its_role() -> None:
    rules = rbac_rules([JobReconciler], namespace="jobs")
    assert by_resource(rules["jobs"]) == JOB_RULES
    # Nodes are watched cluster-wide even then, and no Role can grant them.
    assert by_resource(rules[""]) == CLUSTER_SCOPED


def test_events_of_cluster_scoped_primaries_are_granted_in_default() -> None:
    rules = rbac_rules([PoolReconciler], namespace="pools")
    assert by_resource(rules["default"]) == {
        ("events.k8s.io", "events"): ["create", "patch"],
        ("", "events"): ["create", "patch"],
    }
    assert ("", "configmaps") in by_resource(rules["pools"])
    assert ("batch.example.com", "pools") in by_resource(rules[""])


def test_rules_of_several_reconcilers_merge() -> None:
    rules = rbac_rules([JobReconciler, ConfigReconciler])[""]
    keys = [(r["apiGroups"][0], r["resources"][0]) for r in rules]
    assert len(keys) == len(set(keys)), "one rule per group and resource"
    assert keys == sorted(keys)
    assert ("", "configmaps") in keys


def test_cluster_wide_documents() -> None:
    docs = rbac_documents(
        [JobReconciler], name="op", service_account="op-sa", service_account_namespace="ops"
    )
    assert [(d["kind"], d["metadata"].get("namespace")) for d in docs] == [
        ("ClusterRole", None),
        ("ClusterRoleBinding", None),
        ("Role", "ops"),
        ("RoleBinding", "ops"),
    ]
    assert docs[0] == cluster_role("op", [JobReconciler])
    assert docs[1] == cluster_role_binding("op", "op-sa", "ops")
    lease_role = docs[2]
    assert lease_role["metadata"]["name"] == "op-leader-election"
    # Exactly what the elector calls: create, then get and update of its one Lease.
    assert lease_role["rules"] == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": ["job-leader"],
            "verbs": ["get", "update"],
        },
    ]
    assert docs[3] == role_binding("op-leader-election", "ops", "op-sa", "ops")
    assert docs[3]["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "op-leader-election",
    }


class Reader(ClientRole):
    rbac = (("", "configmaps", ("get", "list", "watch")),)


def test_a_client_role_alone_gets_its_rules_and_no_lease_or_events() -> None:
    docs = rbac_documents([Reader], name="reader", namespace="apps")
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [("Role", "reader")]
    assert by_resource(docs[0]["rules"]) == {("", "configmaps"): ["get", "list", "watch"]}


def test_a_client_role_with_an_operator_adds_its_rules_to_the_operators() -> None:
    docs = rbac_documents([JobReconciler, Reader], name="op", namespace="apps")
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("ClusterRole", "op"),
        ("Role", "op"),
        ("Role", "op-leader-election"),
    ]
    assert by_resource(docs[1]["rules"]) == {
        **JOB_RULES,
        ("", "configmaps"): ["get", "list", "watch"],
    }


def test_namespaced_documents_without_a_service_account() -> None:
    docs = rbac_documents([ConfigReconciler], name="op", namespace="apps")
    assert [(d["kind"], d["metadata"]["name"], d["metadata"].get("namespace")) for d in docs] == [
        ("Role", "op", "apps"),
        ("Role", "op-leader-election", "apps"),
    ]


def test_the_lease_follows_the_run_options() -> None:
    docs = rbac_documents(
        [JobReconciler, ConfigReconciler],
        namespace="apps",
        leader_election_id="my-lease",
        leader_election_namespace="locks",
    )
    lease_role = docs[-1]
    assert lease_role["metadata"]["namespace"] == "locks"
    assert lease_role["rules"][1]["resourceNames"] == ["my-lease"]
    default = rbac_documents([JobReconciler, ConfigReconciler], service_account_namespace="ops")
    assert default[-1]["metadata"]["namespace"] == "ops"
    assert default[-1]["rules"][1]["resourceNames"] == [
        default_leader_election_id(["configmap", "job"])
    ]


def test_default_lease_name_is_the_managers() -> None:
    assert default_leader_election_id(["b", "a"]) == "a-b-leader"
    assert default_leader_election_id(["x" * 60]) == "x" * 50 + "-leader"


def test_extras_on_known_kinds_follow_their_scope() -> None:
    class Extras(Reconciler[ConfigMap]):
        rbac = (("coordination.k8s.io", "leases", ["list"]), ("", "nodes/status", ["patch"]))

    assert Lease.__resource__ is not None
    rules = rbac_rules([Extras], namespace="apps")
    assert ("coordination.k8s.io", "leases") in by_resource(rules["apps"])
    assert ("", "nodes/status") in by_resource(rules[""])


def test_bad_input() -> None:
    class StringVerbs(Reconciler[ConfigMap]):
        rbac = (("", "secrets", "get"),)  # type: ignore[assignment]

    with pytest.raises(TypeError, match="verbs must be a list"):
        rbac_rules([StringVerbs])
    with pytest.raises(ValueError, match="at least one reconciler"):
        rbac_rules([])


class Publisher(Runnable):
    """Writes a status ConfigMap in the operator's own namespace."""

    rbac = (("", "pods", ("get", "list", "watch")),)
    home_rbac = (("", "configmaps", ("get", "create", "patch")),)


class Publishing(Reconciler[Job]):
    runnables = (Publisher,)


@pytest.mark.parametrize("source", [Publisher, Publishing], ids=["runnable", "listed"])
def test_home_rules_are_granted_beside_the_lease_not_everywhere(source: type[Any]) -> None:
    docs = rbac_documents([source], leader_election_id="lock", leader_election_namespace="ops")
    lease_role = docs[-1]
    assert lease_role["kind"] == "Role"
    assert lease_role["metadata"]["namespace"] == "ops"
    home = [r for r in lease_role["rules"] if r["resources"] == ["configmaps"]]
    assert [(r["apiGroups"], set(r["verbs"])) for r in home] == [([""], {"get", "create", "patch"})]
    everywhere = [d for d in docs if d["kind"] == "ClusterRole"]
    assert all(r["resources"] != ["configmaps"] for d in everywhere for r in d["rules"])
