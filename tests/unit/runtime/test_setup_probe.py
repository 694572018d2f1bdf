"""``runtime.setup_probe``: what a reconciler's ``setup`` wires, read without a cluster, and
gen-rbac granting it (informers' get/list/watch, the rbac of runnables setup adds)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from crdkit import Manager, Reconciler, Runnable
from crdkit.cli import main
from crdkit.deploy.rbac import rbac_rules
from crdkit.resources import ConfigMap, Node, Pod, Secret
from crdkit.runtime.setup_probe import AttachedInformer, probe_setup
from crdkit.scheduling import ClusterMirror


class Reporter(Runnable):
    rbac = (("example.com", "reports", ["create"]),)

    async def run(self, manager: Manager) -> None:
        return None


class Mirrored(Reconciler[ConfigMap]):
    def __init__(self, zone: str = "a") -> None:
        self.zone = zone
        self.mirror = ClusterMirror()

    def setup(self, manager: Manager) -> None:
        self.mirror.attach(manager)
        manager.informers.informer(Secret, namespace=manager.namespace)
        manager.add_runnable(Reporter())


class NeedsZones(Mirrored):
    def __init__(self, zones: list[str]) -> None:
        super().__init__(zones[0])


def test_the_probe_sees_the_informers_and_runnables_setup_adds() -> None:
    attached = probe_setup(Mirrored(), namespace="ops")
    assert set(attached.informers) == {
        AttachedInformer(ConfigMap, namespaced_watch=True, metadata_only=False),  # the primary
        AttachedInformer(Node, namespaced_watch=False, metadata_only=False),
        AttachedInformer(Pod, namespaced_watch=False, metadata_only=False),  # every namespace
        AttachedInformer(Secret, namespaced_watch=True, metadata_only=False),
    }
    assert attached.runnables == (Reporter,)


def _grants(rules: dict[str, list[dict[str, Any]]]) -> dict[tuple[str, str], set[str]]:
    return {
        (where, rule["resources"][0]): set(rule["verbs"])
        for where, listed in rules.items()
        for rule in listed
    }


def test_a_built_reconciler_gets_what_its_setup_attaches_scoped_as_watched() -> None:
    declared = _grants(rbac_rules([Mirrored], namespace="ops"))
    assert ("", "nodes") not in declared
    built = _grants(rbac_rules([Mirrored()], namespace="ops"))
    # Nodes are cluster-scoped; the mirror's Pods are watched in every namespace: both
    # need the ClusterRole even for an operator confined to "ops".
    assert built[("", "nodes")] == built[("", "pods")] == {"get", "list", "watch"}
    assert built[("ops", "secrets")] == {"get", "list", "watch"}
    assert built[("", "reports")] == {"create"}
    assert built[("ops", "configmaps")] == declared[("ops", "configmaps")]


def test_gen_rbac_builds_with_options_and_says_when_it_cannot(tmp_path: Path) -> None:
    ref = f"{__file__}:NeedsZones"
    result = CliRunner().invoke(main, ["gen-rbac", ref])
    assert result.exit_code == 0, result.output
    [note] = result.stderr.splitlines()
    assert note.startswith("crdkit gen-rbac: note: NeedsZones could not be built (TypeError:")
    assert "give the --option values crdkit run gets" in note
    assert "nodes" not in result.stdout

    result = CliRunner().invoke(main, ["gen-rbac", ref, "--option", "zones=a,b"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    cluster_role = next(yaml.safe_load_all(result.stdout))
    assert {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]} in (
        cluster_role["rules"]
    )
    config = tmp_path / "gang.yaml"
    config.write_text("zones: [a]\n")
    result = CliRunner().invoke(main, ["gen-rbac", ref, "--config", str(config)])
    assert (result.exit_code, result.stderr) == (0, "")

    result = CliRunner().invoke(main, ["gen-rbac", ref, "--option", "colour=red"])
    assert result.exit_code == 2
    assert result.stderr.startswith("crdkit gen-rbac: --option colour")


def test_gen_manifests_covers_setup_through_its_run_options(tmp_path: Path) -> None:
    ref = f"{__file__}:NeedsZones"
    result = CliRunner().invoke(
        main,
        [
            "gen-manifests",
            ref,
            "--name",
            "z",
            "--image",
            "z:1",
            "--option",
            "zones=a",
            "-o",
            str(tmp_path / "config"),
            "--dockerfile",
            str(tmp_path / "Dockerfile"),
        ],
    )
    assert result.exit_code == 0, result.output
    role = (tmp_path / "config" / "rbac" / "role.yaml").read_text()
    assert "nodes" in role
    assert "reports" in role
