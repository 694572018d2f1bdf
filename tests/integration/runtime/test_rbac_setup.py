"""gen-rbac covers what a reconciler's ``setup`` attaches: an operator that keeps a
``ClusterMirror`` (``self.mirror.attach(manager)`` in ``setup``) runs on the real apiserver
under exactly the roles gen-rbac wrote for it, as its own ServiceAccount, and its mirror sees
the cluster's Nodes and Pods. The roles from the class's declarations alone lack Nodes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from _runtime_support import eventually, new_manager
from click.testing import CliRunner

from crdkit import Context, Manager, Reconciler
from crdkit.cli import main
from crdkit.client import Client, GroupVersionKind
from crdkit.deploy.rbac import rbac_documents
from crdkit.resources import ConfigMap, Node
from crdkit.scheduling import ClusterMirror
from crdkit.testing import ControlPlane
from crdkit.testing.envtest.users import service_account_token, token_kubeconfig
from crdkit.testing.sim.nodes import create_nodes, simulated_node

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


class MirroredPlacement(Reconciler[ConfigMap]):
    """Places work from ConfigMaps on the nodes its mirror sees (the placing is not the point
    here: the rights its ``setup`` needs are)."""

    name = "mirrored-placement"

    def __init__(self) -> None:
        self.mirror = ClusterMirror()

    def setup(self, manager: Manager) -> None:
        self.mirror.attach(manager)

    async def reconcile(self, ctx: Context, obj: ConfigMap) -> None:
        return None


def _rules(documents: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {
        (rule["resources"][0], verb)
        for d in documents
        if d["kind"] in ("Role", "ClusterRole")
        for rule in d["rules"]
        for verb in rule["verbs"]
    }


async def test_an_operator_with_a_mirror_runs_under_exactly_the_generated_role(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str, tmp_path: Path
) -> None:
    account = "mirror-operator"
    name = f"mirror-{namespace}"
    ref = f"{__file__}:MirroredPlacement"
    result = CliRunner().invoke(
        main,
        [
            "gen-rbac",
            ref,
            "--name",
            name,
            "--namespace",
            namespace,
            "--service-account",
            account,
            "--service-account-namespace",
            namespace,
        ],
    )
    assert result.exit_code == 0, result.output
    documents = list(yaml.safe_load_all(result.stdout))
    # What the class declares alone (the old gen-rbac) lacks what setup() attaches.
    declared = _rules(rbac_documents([MirroredPlacement], namespace=namespace))
    assert ("nodes", "list") not in declared
    assert {("nodes", "list"), ("nodes", "watch"), ("pods", "watch")} <= _rules(documents)

    await create_nodes(crdkit_client, [simulated_node(f"{namespace}-n1")])
    token = await service_account_token(crdkit_client, namespace, account)
    created: list[dict[str, Any]] = []
    try:
        for document in documents:
            await crdkit_client.create(document)
            created.append(document)
        kubeconfig = token_kubeconfig(
            tmp_path / "kubeconfig", control_plane, token, user=account, namespace=namespace
        )
        async with await Client.from_kubeconfig(kubeconfig) as restricted:
            reconciler = MirroredPlacement()
            manager = new_manager(
                restricted,
                namespace,
                leader_election=True,
                leader_election_namespace=namespace,
                cache_sync_timeout=30,
            )
            manager.add(reconciler)
            task = asyncio.create_task(manager.run())
            try:
                await asyncio.wait_for(manager.wait_ready(), 60)

                async def mirrored() -> bool:
                    return f"{namespace}-n1" in reconciler.mirror.node_names()

                await eventually(mirrored, what="the mirror holds the node")
            finally:
                manager.stop()
                await asyncio.wait_for(task, 60)
    finally:
        await crdkit_client.delete(Node, f"{namespace}-n1")
        for document in created:
            if document["kind"] in ("ClusterRole", "ClusterRoleBinding"):
                await crdkit_client.delete(GroupVersionKind.of(document), name)
