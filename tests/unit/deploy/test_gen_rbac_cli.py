"""``crdkit gen-rbac`` end to end, without a cluster (test_rbac_live runs its output)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from crdkit.cli import main


def gen_rbac(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["gen-rbac", *args])
    return result.exit_code, result.output


def resources(document: dict[str, Any]) -> set[str]:
    return {resource for rule in document["rules"] for resource in rule["resources"]}


def test_cluster_wide_role_bindings_and_the_lease_role(tmp_path: Path) -> None:
    out = tmp_path / "rbac.yaml"
    code, output = gen_rbac(
        "examples.hello.operator:HelloReconciler",
        "--name",
        "hello",
        "--service-account",
        "hello-sa",
        "--service-account-namespace",
        "ops",
        "-o",
        str(out),
    )
    assert code == 0, output
    role, binding, lease_role, lease_binding = yaml.safe_load_all(out.read_text())
    assert (role["kind"], binding["kind"]) == ("ClusterRole", "ClusterRoleBinding")
    kinds = {"hellos", "hellos/status", "hellos/finalizers", "configmaps", "events"}
    assert resources(role) == kinds
    subject = {"kind": "ServiceAccount", "name": "hello-sa", "namespace": "ops"}
    assert binding["subjects"] == [subject]
    assert (lease_role["kind"], lease_role["metadata"]) == (
        "Role",
        {"name": "hello-leader-election", "namespace": "ops"},
    )
    assert resources(lease_role) == {"leases"}
    assert lease_role["rules"][1]["resourceNames"] == ["hello-leader"]
    assert lease_binding["kind"] == "RoleBinding"
    assert lease_binding["subjects"] == [subject]


def test_namespace_gives_roles_only() -> None:
    code, output = gen_rbac(
        "examples.hello.operator:HelloReconciler",
        "-n",
        "demo",
        "--service-account",
        "hello",
        "--service-account-namespace",
        "ops",
        "--leader-election-id",
        "hello-lock",
    )
    assert code == 0, output
    documents = list(yaml.safe_load_all(output))
    assert [(d["kind"], d["metadata"]["name"], d["metadata"]["namespace"]) for d in documents] == [
        ("Role", "crdkit-operator", "demo"),
        ("RoleBinding", "crdkit-operator", "demo"),
        ("Role", "crdkit-operator-leader-election", "demo"),
        ("RoleBinding", "crdkit-operator-leader-election", "demo"),
    ]
    assert "configmaps" in resources(documents[0])
    assert documents[1]["subjects"][0]["namespace"] == "ops"
    assert documents[2]["rules"][1]["resourceNames"] == ["hello-lock"]


def test_gen_rbac_names_a_bad_reference() -> None:
    code, output = gen_rbac("examples.hello.operator:Nope")
    assert code == 2
    assert "has no attribute 'Nope'" in output


def test_bad_declarations_are_usage_errors(tmp_path: Path) -> None:
    module = tmp_path / "bad_rbac.py"
    module.write_text(
        "from crdkit import Reconciler\n"
        "from crdkit.resources import ConfigMap\n"
        "class Bad(Reconciler[ConfigMap]):\n"
        "    rbac = (('', 'secrets', 'get'),)\n"
    )
    code, output = gen_rbac(f"{module}:Bad")
    assert code == 2
    assert "verbs must be a list" in output
