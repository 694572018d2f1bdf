"""``crdkit gen-rbac`` for runnables and ``--check ROLE.yaml``: the matching rules (wildcards,
resourceNames, several documents) and the refusals of files that hold no roles."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from click.testing import CliRunner

from crdkit.cli import main
from crdkit.deploy.role_check import (
    GrantedRule,
    Permission,
    RoleFileError,
    load_granted_rules,
    missing_permissions,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

OPERATOR = """\
from crdkit import Reconciler, Runnable, Watch
from crdkit.resources import ConfigMap, Node, Pod

class Binder(Runnable):
    rbac = (("", "pods/binding", ["create"]), ("", "pods", ["get", "list", "watch"]))

class Reporter(Runnable):
    needs_leader = False
    rbac = (("example.com", "reports", ["create"]),)

class Gang(Reconciler[ConfigMap]):
    watches = (Watch(Node, metadata_only=True),)
    runnables = (Binder,)
"""


@pytest.fixture
def operator(tmp_path: Path) -> Path:
    module = tmp_path / "gang_operator_for_rbac.py"
    module.write_text(OPERATOR)
    return module


def gen_rbac(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["gen-rbac", *args])
    return result.exit_code, result.stdout, result.stderr


def rule(
    groups: list[str], resources: list[str], verbs: list[str], names: Sequence[str] = ()
) -> GrantedRule:
    return GrantedRule(frozenset(groups), frozenset(resources), frozenset(verbs), frozenset(names))


@pytest.mark.parametrize(
    ("granted", "ok"),
    [
        (rule([""], ["pods/binding"], ["create"]), True),
        (rule(["*"], ["pods/binding"], ["create"]), True),
        (rule([""], ["*"], ["create"]), True),
        (rule([""], ["*/binding"], ["create"]), True),
        (rule([""], ["pods/binding"], ["*"]), True),
        (rule([""], ["pods"], ["create"]), False),  # the resource does not cover a subresource
        (rule([""], ["*/status"], ["create"]), False),
        (rule(["apps"], ["pods/binding"], ["create"]), False),
        (rule([""], ["pods/binding"], ["create"], ["one-pod"]), False),  # names limit it
    ],
)
def test_wildcards_and_resource_names(granted: GrantedRule, ok: bool) -> None:
    needed = Permission("", "pods/binding", "create")
    assert missing_permissions([needed], [granted]) == ([] if ok else [needed])


def test_a_named_permission_needs_that_name_or_no_restriction() -> None:
    lease = Permission("coordination.k8s.io", "leases", "get", "op-leader")
    group = ["coordination.k8s.io"]
    assert not missing_permissions([lease], [rule(group, ["leases"], ["get"], ["op-leader"])])
    assert not missing_permissions([lease], [rule(group, ["leases"], ["get"])])
    assert missing_permissions([lease], [rule(group, ["leases"], ["get"], ["other"])]) == [lease]


def test_rules_merge_across_documents_and_lists(tmp_path: Path) -> None:
    path = tmp_path / "roles.yaml"
    path.write_text(
        yaml.safe_dump_all(
            [
                {
                    "kind": "ClusterRole",
                    "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
                },
                None,
                {
                    "kind": "List",
                    "items": [
                        {
                            "kind": "Role",
                            "rules": [
                                {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}
                            ],
                        },
                        {"kind": "RoleBinding", "roleRef": {}},
                    ],
                },
                {
                    "kind": "ClusterRole",
                    "rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}],
                },
            ]
        )
    )
    needed = [Permission("", "pods", verb) for verb in ("get", "list", "watch")]
    assert missing_permissions(needed, load_granted_rules(path)) == [
        Permission("", "pods", "watch")
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kind: Role\nrules: [\n", "roles.yaml: not YAML: line 3"),
        (
            "kind: Role\nrules: []\n---\nkind: ConfigMap\n",
            "roles.yaml: document 2: expected a Role, ClusterRole or a List of them, got kind "
            "'ConfigMap'",
        ),
        ("- a\n- b\n", "roles.yaml: document 1: expected a Role or ClusterRole, got a list"),
        ("kind: List\nitems:\n- kind: Secret\n", "document 1, item 0: expected a Role"),
        (
            "kind: Role\nrules:\n- apiGroups: ''\n",
            "document 1: rules[0].apiGroups must be a list of strings",
        ),
    ],
)
def test_files_without_roles_are_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "roles.yaml"
    path.write_text(text)
    with pytest.raises(RoleFileError, match="^" + str(tmp_path).replace("\\", "\\\\")) as refused:
        load_granted_rules(path)
    assert message in str(refused.value)


def test_gen_rbac_covers_runnables_and_watches(operator: Path) -> None:
    code, out, _ = gen_rbac(f"{operator}:Gang", f"{operator}:Reporter")
    assert code == 0, out
    cluster_role = next(yaml.safe_load_all(out))
    rules = {(r["apiGroups"][0], r["resources"][0]): r["verbs"] for r in cluster_role["rules"]}
    assert rules[("", "pods/binding")] == ["create"]  # Gang.runnables
    assert rules[("", "pods")] == ["get", "list", "watch"]
    assert rules[("", "nodes")] == ["get", "list", "watch"]  # the Watch
    assert rules[("example.com", "reports")] == ["create"]  # a Runnable named on its own
    assert rules[("", "events")] == rules[("events.k8s.io", "events")] == ["create", "patch"]


def test_gen_rbac_takes_a_runnable_alone_and_refuses_other_classes(operator: Path) -> None:
    code, out, _ = gen_rbac(f"{operator}:Binder")
    assert code == 0, out
    assert "pods/binding" in out
    assert "crdkit-leader" in out  # no controller names the Lease: the fallback does
    code, _, err = gen_rbac(f"{operator}:Watch")
    assert code == 2
    assert "is not a Reconciler, Runnable or ClientRole subclass" in err


def write(path: Path, documents: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump_all(documents))
    return path


def test_check_says_ok_for_its_own_output_and_names_a_removed_rule(
    operator: Path, tmp_path: Path
) -> None:
    ref = f"{operator}:Gang"
    code, out, _ = gen_rbac(ref, "--service-account", "gang")
    assert code == 0
    documents = list(yaml.safe_load_all(out))
    role = write(tmp_path / "role.yaml", documents)
    code, out, _ = gen_rbac(ref, "--check", str(role))
    assert (code, out.splitlines()) == (
        0,
        [f"ok: {role} grants everything the operator needs (23 permissions)"],
    )

    cluster = documents[0]
    cluster["rules"] = [r for r in cluster["rules"] if r["resources"] != ["pods/binding"]]
    code, out, _ = gen_rbac(ref, "--check", str(write(tmp_path / "less.yaml", documents)))
    assert (code, out.splitlines()) == (1, ['missing: pods/binding create (group "")'])

    lease_role = documents[2]
    lease_role["rules"] = [r for r in lease_role["rules"] if "resourceNames" not in r]
    code, out, _ = gen_rbac(ref, "--check", str(write(tmp_path / "less2.yaml", documents)))
    assert code == 1
    assert out.splitlines() == [
        'missing: pods/binding create (group "")',
        'missing: leases get (group "coordination.k8s.io", name "configmap-leader")',
        'missing: leases update (group "coordination.k8s.io", name "configmap-leader")',
    ]


def test_check_refuses_a_bad_file_in_one_line(operator: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Role\n---\nkind: Pod\n")
    code, out, err = gen_rbac(f"{operator}:Gang", "--check", str(bad))
    assert code == 2
    assert out == ""
    assert err.splitlines() == [
        f"crdkit gen-rbac: {bad}: document 2: expected a Role, ClusterRole or a List of them, "
        "got kind 'Pod'"
    ]
    code, _, err = gen_rbac(f"{operator}:Gang", "--check", str(tmp_path / "missing.yaml"))
    assert code == 2
    assert err.startswith(f"crdkit gen-rbac: {tmp_path / 'missing.yaml'}: no such file")


def test_check_merges_several_files_and_directories(operator: Path, tmp_path: Path) -> None:
    ref = f"{operator}:Gang"
    _, out, _ = gen_rbac(ref, "--service-account", "gang")
    cluster, binding, lease, lease_binding = list(yaml.safe_load_all(out))
    (tmp_path / "rbac").mkdir()
    main_role = write(tmp_path / "rbac" / "role.yaml", [cluster, binding])
    # The main role alone lacks the Lease: every file given counts, not only the last one.
    code, out, _ = gen_rbac(ref, "--check", str(main_role))
    assert code == 1
    assert 'missing: leases get (group "coordination.k8s.io", name "configmap-leader")' in out
    election = write(tmp_path / "election.yaml", [lease, lease_binding])
    code, out, _ = gen_rbac(ref, "--check", str(main_role), "--check", str(election))
    assert code == 0, out
    assert out.startswith(f"ok: {main_role}, {election} grant everything")
    code, out, _ = gen_rbac(ref, "--check", str(election), "--check", str(main_role))
    assert code == 0, out  # ... in any order
    # A directory is its YAML files; a ServiceAccount or kustomization in it grants nothing.
    write(tmp_path / "rbac" / "leader_election_role.yaml", [lease, lease_binding])
    write(
        tmp_path / "rbac" / "service_account.yaml",
        [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "gang"}}],
    )
    code, out, _ = gen_rbac(ref, "--check", str(tmp_path / "rbac"))
    assert code == 0, out
    code, _, err = gen_rbac(ref, "--check", str(tmp_path / "rbac"), "--check", str(tmp_path / "x"))
    assert code == 2
    assert err.strip() == f"crdkit gen-rbac: {tmp_path / 'x'}: no such file or directory"
    (tmp_path / "empty").mkdir()
    code, _, err = gen_rbac(ref, "--check", str(tmp_path / "empty"))
    assert code == 2
    assert "a directory without .yaml or .yml files" in err


def test_check_accepts_what_gen_manifests_writes(tmp_path: Path) -> None:
    ref = "examples.hello.operator:HelloReconciler"
    result = CliRunner().invoke(
        main,
        [
            "gen-manifests",
            ref,
            "--name",
            "hello",
            "--image",
            "h:1",
            "-o",
            str(tmp_path / "config"),
            "--dockerfile",
            str(tmp_path / "Dockerfile"),
        ],
    )
    assert result.exit_code == 0, result.output
    rbac = tmp_path / "config" / "rbac"
    args = ["--name", "hello", "--service-account-namespace", "hello-system"]
    # gen-manifests puts the Lease's Role in its own file: the main role alone lacks it ...
    code, out, _ = gen_rbac(ref, *args, "--check", str(rbac / "role.yaml"))
    assert code == 1
    assert "leases" in out
    # ... the directory merged grants everything.
    code, out, _ = gen_rbac(ref, *args, "--check", str(rbac))
    assert code == 0, out
