"""The hello operator runs with exactly ``crdkit gen-rbac``'s roles, and with nothing more.

A ServiceAccount gets the generated roles and bindings, a token from the TokenRequest API and
a kubeconfig holding it; ``crdkit run`` with that kubeconfig (and leader election) must then
reconcile a Hello, and the same identity must be refused (403) ConfigMaps and Leases in
kube-system. The operator's own log must show no refusal either: a missing right that only
causes retries (a Lease it may not read, an Event it may not write) would otherwise pass.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from _live import (
    apply_all,
    crdkit_process,
    create_hello,
    delete_cluster_wide,
    gen_rbac,
)
from _runtime_support import HELLO_CRD, eventually

from _hello import hello_greeted
from crdkit.client import Client, Forbidden
from crdkit.resources import ConfigMap, Lease, LeaseSpec, ObjectMeta
from crdkit.testing import ControlPlane
from crdkit.testing.envtest.users import service_account_token, token_kubeconfig

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(180)]

SERVICE_ACCOUNT = "hello-operator"


def generated_rbac(*args: str) -> list[dict[str, Any]]:
    return gen_rbac("examples.hello.operator:HelloReconciler", *args)


def namespaced_rbac(namespace: str, *more: str) -> list[dict[str, Any]]:
    """gen-rbac's roles for an operator of ``namespace``, bound to its service account there."""
    return generated_rbac(
        *("--name", f"hello-{namespace}", "--namespace", namespace),
        *("--service-account", SERVICE_ACCOUNT, "--service-account-namespace", namespace),
        *more,
    )


def run_operator(
    kubeconfig: Path, log: Path, *args: str, election: tuple[str, ...] = ("--leader-elect",)
) -> contextlib.AbstractAsyncContextManager[asyncio.subprocess.Process]:
    return crdkit_process(
        log,
        "run",
        "examples.hello.operator:HelloReconciler",
        "--kubeconfig",
        str(kubeconfig),
        *election,
        "--metrics-bind-address",
        "0",
        "--health-probe-bind-address",
        "0",
        *args,
    )


async def greets(admin: Client, namespace: str) -> None:
    """A Hello in ``namespace`` gets its ConfigMap and a Ready status from the operator."""
    await create_hello(admin, namespace, "rbac")
    await eventually(
        lambda: hello_greeted(admin, namespace, "Hello, rbac!"),
        within=60,
        what="the operator greeted",
    )


async def operator_kubeconfig(
    admin: Client, plane: ControlPlane, namespace: str, directory: Path
) -> Path:
    """A kubeconfig in ``directory`` that signs in as the operator's service account."""
    token = await service_account_token(admin, namespace, SERVICE_ACCOUNT)
    return token_kubeconfig(
        directory / "kubeconfig", plane, token, user=SERVICE_ACCOUNT, namespace=namespace
    )


def leader_lease_in_kube_system() -> Lease:
    """The operator's leader Lease, but in a namespace its roles do not reach."""
    return Lease(
        metadata=ObjectMeta(name="hello-leader", namespace="kube-system"),
        spec=LeaseSpec(holder_identity="x"),
    )


async def assert_forbidden(what: str, call: Any) -> None:
    with pytest.raises(Forbidden) as refused:
        await call
    assert refused.value.code == 403, what


def refusals_in(log: Path, namespace: str) -> list[str]:
    """The operator's log lines where RBAC refused it something.

    Matched on the authorizer's wording, not on 403: a cluster-wide operator also meets the
    Hellos of earlier tests in namespaces stuck Terminating (no controller-manager), where
    writes are refused with a 403 that has nothing to do with RBAC.
    """
    identity = f'User "system:serviceaccount:{namespace}:{SERVICE_ACCOUNT}" cannot'
    refusals = []
    for line in log.read_text().splitlines():
        try:  # JSON log lines escape the quotes of the message
            record = json.loads(line)
            text = " ".join(map(str, record.values())) if isinstance(record, dict) else line
        except ValueError:
            text = line
        if identity in text:
            refusals.append(text)
    return refusals


async def test_namespaced_operator_runs_with_generated_roles_only(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str, tmp_path: Path
) -> None:
    await control_plane.install_crds([HELLO_CRD])
    documents = namespaced_rbac(namespace)
    assert {d["kind"] for d in documents} == {"Role", "RoleBinding"}
    await apply_all(crdkit_client, documents)
    kubeconfig = await operator_kubeconfig(crdkit_client, control_plane, namespace, tmp_path)
    log = tmp_path / "operator.stderr"
    async with run_operator(kubeconfig, log, "--namespace", namespace) as process:
        await greets(crdkit_client, namespace)
        lease = await crdkit_client.get(Lease, "hello-leader", namespace=namespace)
        assert lease.spec.holder_identity
        assert process.returncode is None
    assert process.returncode == 0, log.read_text()
    assert refusals_in(log, namespace) == []

    async with await Client.from_kubeconfig(kubeconfig) as operator:
        # What it has: its kinds in its namespace, and its Lease.
        await operator.list(ConfigMap, namespace=namespace)
        await operator.get(Lease, "hello-leader", namespace=namespace)
        # What it has not: other namespaces, other Leases.
        await assert_forbidden(
            "list configmaps in kube-system", operator.list(ConfigMap, namespace="kube-system")
        )
        await assert_forbidden(
            "delete a configmap in kube-system",
            operator.delete(
                ConfigMap, "extension-apiserver-authentication", namespace="kube-system"
            ),
        )
        await assert_forbidden("list configmaps everywhere", operator.list(ConfigMap))
        await assert_forbidden(
            "list leases in kube-system", operator.list(Lease, namespace="kube-system")
        )
        await assert_forbidden(
            "get a lease in kube-system",
            operator.get(Lease, "kube-scheduler", namespace="kube-system"),
        )
        await assert_forbidden(
            "create a lease in kube-system",
            operator.create(leader_lease_in_kube_system()),
        )
        await assert_forbidden(
            "get another lease in its own namespace",
            operator.get(Lease, "someone-else", namespace=namespace),
        )


async def test_sharded_operator_runs_with_generated_roles_only(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str, tmp_path: Path
) -> None:
    # A shard creates its own Lease and the sharder watches the ring's: --shards grants that.
    await control_plane.install_crds([HELLO_CRD])
    documents = namespaced_rbac(namespace, "--shards")
    await apply_all(crdkit_client, documents)
    kubeconfig = await operator_kubeconfig(crdkit_client, control_plane, namespace, tmp_path)
    log = tmp_path / "operator.stderr"
    shard = ("--shards", "--shard-id", "s1")
    async with run_operator(kubeconfig, log, "--namespace", namespace, election=shard) as process:
        await greets(crdkit_client, namespace)
        leases = (await crdkit_client.list(Lease, namespace=namespace)).items
        assert {lease.metadata.labels.get("shard.crdkit.io/id") for lease in leases} >= {"s1"}
        assert process.returncode is None
    assert process.returncode == 0, log.read_text()
    assert refusals_in(log, namespace) == []


async def test_cluster_wide_operator_keeps_its_lease_in_its_namespace(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str, tmp_path: Path
) -> None:
    await control_plane.install_crds([HELLO_CRD])
    name = f"hello-{namespace}"
    documents = generated_rbac(
        "--name",
        name,
        "--service-account",
        SERVICE_ACCOUNT,
        "--service-account-namespace",
        namespace,
    )
    await apply_all(crdkit_client, documents)
    try:
        kubeconfig = await operator_kubeconfig(crdkit_client, control_plane, namespace, tmp_path)
        log = tmp_path / "operator.stderr"
        # In a pod the manager finds its namespace in the service account's files; here it
        # is given, as it is to gen-rbac (through --service-account-namespace).
        async with run_operator(
            kubeconfig, log, "--leader-election-namespace", namespace
        ) as process:
            await greets(crdkit_client, namespace)
            assert process.returncode is None
        assert process.returncode == 0, log.read_text()
        assert refusals_in(log, namespace) == []

        async with await Client.from_kubeconfig(kubeconfig) as operator:
            # Watching every namespace, it owns ConfigMaps everywhere, but no Lease but its own.
            await operator.list(ConfigMap, namespace="kube-system")
            await assert_forbidden(
                "list leases in kube-system", operator.list(Lease, namespace="kube-system")
            )
            await assert_forbidden("list leases everywhere", operator.list(Lease))
            await assert_forbidden(
                "create a lease in kube-system",
                operator.create(leader_lease_in_kube_system()),
            )
    finally:
        await delete_cluster_wide(crdkit_client, documents)
