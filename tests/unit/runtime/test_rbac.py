"""Unit tests of the least-privilege RBAC rules."""

from __future__ import annotations

from typing import Any

import pytest

from crdkit import Reconciler, Request
from crdkit.resources import ConfigMap, CustomResource, Node, Pod
from crdkit.runtime.rbac import cluster_role, cluster_role_binding, rbac_rules


class Job(CustomResource, group="batch.example.com", version="v1", kind="Job"):
    pass


def to_jobs(node: Any) -> list[Request]:
    return []


class JobReconciler(Reconciler[Job]):
    owns = (Pod,)
    watches = ((Node, to_jobs),)
    rbac = (("", "pods/binding", ["create"]),)


class ConfigReconciler(Reconciler[ConfigMap]):
    owns = (Pod,)


def rules_by_resource(rules: list[dict[str, Any]]) -> dict[tuple[str, str], list[str]]:
    return {(r["apiGroups"][0], r["resources"][0]): r["verbs"] for r in rules}


def test_rules_follow_declarations() -> None:
    rules = rules_by_resource(rbac_rules([JobReconciler]))
    assert rules == {
        ("batch.example.com", "jobs"): ["get", "list", "watch", "update", "patch"],
        ("batch.example.com", "jobs/status"): ["get", "update", "patch"],
        ("batch.example.com", "jobs/finalizers"): ["update"],
        ("", "pods"): ["get", "list", "watch", "create", "update", "patch", "delete"],
        ("", "nodes"): ["get", "list", "watch"],
        ("", "pods/binding"): ["create"],
        ("coordination.k8s.io", "leases"): [
            "get", "list", "watch", "create", "update", "patch", "delete",
        ],
        ("events.k8s.io", "events"): ["create", "update", "patch"],
    }  # fmt: skip


def test_rules_of_several_reconcilers_merge() -> None:
    rules = rbac_rules([JobReconciler, ConfigReconciler])
    keys = [(r["apiGroups"][0], r["resources"][0]) for r in rules]
    assert len(keys) == len(set(keys)), "one rule per group and resource"
    assert keys == sorted(keys)
    assert ("", "configmaps") in keys


def test_role_and_binding_documents() -> None:
    role = cluster_role("op", [JobReconciler])
    assert (role["kind"], role["metadata"]["name"]) == ("ClusterRole", "op")
    binding = cluster_role_binding("op", "op-sa", "ops")
    assert binding["roleRef"]["name"] == "op"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "op-sa", "namespace": "ops"}]


def test_bad_input() -> None:
    class StringVerbs(Reconciler[ConfigMap]):
        rbac = (("", "secrets", "get"),)  # type: ignore[assignment]

    with pytest.raises(TypeError, match="verbs must be a list"):
        rbac_rules([StringVerbs])
    with pytest.raises(ValueError, match="at least one reconciler"):
        rbac_rules([])
