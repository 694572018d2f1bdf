"""`crdkit gen-manifests` on the hello operator, judged by the real tools: kustomize (its
library, built from the Go module proxy) builds config/default, the apiserver takes every
document under a strict server-side dry-run and then for real, and the generated Deployment's
command, run as a process with only its ServiceAccount's token and the generated RBAC,
reconciles a Hello without one 403."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from _live import create_hello
from click.testing import CliRunner

from _hello import hello_greeted
from crdkit.client import Client, GroupVersionKind
from crdkit.deploy.cli.manifests import gen_manifests
from crdkit.testing import ControlPlane, eventually
from crdkit.testing.envtest.processes import free_ports
from crdkit.testing.envtest.users import service_account_token, token_kubeconfig

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[3]
KUSTOMIZE_BUILD = ROOT / "tools" / "kustomize" / "build.sh"
MANAGER = "crdkit-gen-manifests-test"


def kustomize() -> str:
    if not (os.environ.get("GO") or shutil.which("go") or Path("/usr/local/go/bin/go").exists()):
        pytest.fail("no Go toolchain (GO, go on PATH or /usr/local/go): cannot build kustomize")
    built = subprocess.run(
        ["bash", str(KUSTOMIZE_BUILD)], capture_output=True, text=True, timeout=900
    )
    if built.returncode != 0:
        pytest.fail(f"tools/kustomize/build.sh failed (exit {built.returncode}):\n{built.stderr}")
    return built.stdout.strip().splitlines()[-1]


def generate(folder: Path, name: str, *extra: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(
        gen_manifests,
        [
            "examples.hello.operator:HelloReconciler",
            "--name",
            name,
            "--image",
            "registry.example.com/hello:0.1",
            "--output-dir",
            str(folder / "config"),
            "--dockerfile",
            str(folder / "Dockerfile"),
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    built = subprocess.run(
        [kustomize(), str(folder / "config" / "default")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    return [doc for doc in yaml.safe_load_all(built.stdout) if doc]


async def apply(client: Client, document: dict[str, Any], *, dry_run: bool) -> None:
    group, _, version = document["apiVersion"].rpartition("/")
    target = await client.resolve(GroupVersionKind(group, version, document["kind"]))
    namespace = document["metadata"].get("namespace")
    params = {"fieldManager": MANAGER, "force": "true", "fieldValidation": "Strict"}
    if dry_run:
        params["dryRun"] = "All"
    await client.transport.request(
        "PATCH",
        target.info.path(namespace=namespace, name=document["metadata"]["name"]),
        params=params,
        body=json.dumps(document).encode(),
        content_type="application/apply-patch+yaml",
    )


def with_bind_addresses(command: list[str]) -> tuple[list[str], int]:
    """The Deployment's command with free local ports (the pod's own ports are not free here),
    and the metrics port."""
    args = list(command)
    flags = ("--metrics-bind-address", "--health-probe-bind-address")
    ports = dict(zip(flags, free_ports(len(flags)), strict=True))
    for flag, port in ports.items():
        args[args.index(flag) + 1] = f"127.0.0.1:{port}"
    return args, ports["--metrics-bind-address"]


async def scrape(port: int, token: str) -> int:
    """The status of an HTTPS GET /metrics with ``token`` (the manager's certificate is its
    own self-signed one, so it is not verified here)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
    writer.write(
        f"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n".encode()
    )
    await writer.drain()
    head = (await reader.read()).split(b"\r\n", 1)[0]
    writer.close()
    return int(head.split()[1])


async def test_generated_manifests_deploy_and_the_manager_reconciles_with_its_own_rbac(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str, tmp_path: Path
) -> None:
    name = f"hello-{uuid.uuid4().hex[:6]}"
    documents = generate(tmp_path, name)
    kinds = sorted(doc["kind"] for doc in documents)
    assert kinds == sorted(
        [
            "CustomResourceDefinition",
            "Namespace",
            "ServiceAccount",
            "ClusterRole",  # the operator's
            "ClusterRoleBinding",
            "ClusterRole",  # metrics auth: TokenReview, SubjectAccessReview
            "ClusterRoleBinding",
            "ClusterRole",  # metrics reader, for scrapers to bind
            "Role",
            "RoleBinding",
            "Deployment",
            "Service",
        ]
    )
    by_kind = {doc["kind"]: doc for doc in documents if not doc["kind"].startswith("Cluster")}
    await apply(crdkit_client, by_kind["Namespace"], dry_run=False)
    for document in documents:
        await apply(crdkit_client, document, dry_run=True)
    for document in documents:
        await apply(crdkit_client, document, dry_run=False)

    deployment = by_kind["Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False

    operator_namespace = deployment["metadata"]["namespace"]
    token = await service_account_token(
        crdkit_client, operator_namespace, pod["serviceAccountName"], create=False
    )
    kubeconfig = token_kubeconfig(
        tmp_path / "kubeconfig", control_plane, token, user=name, namespace=operator_namespace
    )
    command, metrics_port = with_bind_addresses(container["command"])
    assert "--metrics-secure" in command
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), str(ROOT)]),
        "POD_NAMESPACE": operator_namespace,
    }
    log_path = tmp_path / "manager.log"
    crdkit_command = Path(sys.executable).with_name("crdkit")
    with log_path.open("w") as log:
        process = await asyncio.create_subprocess_exec(
            str(crdkit_command),
            *command[1:],
            "--kubeconfig",
            str(kubeconfig),
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        await create_hello(crdkit_client, namespace, "you")

        async def greeted() -> bool:
            assert process.returncode is None, log_path.read_text()
            return await hello_greeted(crdkit_client, namespace, "Hello, you!")

        await eventually(greeted, within=180, what="the manager reconciles the Hello")
        # it leads through the Lease its namespaced leader-election Role lets it take
        lease = await crdkit_client.get(
            GroupVersionKind("coordination.k8s.io", "v1", "Lease"),
            f"{name}-leader",
            namespace=operator_namespace,
        )
        assert lease["spec"]["holderIdentity"]

        # a scraper bound to the generated metrics-reader role reads the metrics, checked by
        # the manager with the generated metrics-auth role; anyone else is refused
        scraper = await service_account_token(crdkit_client, operator_namespace, "scraper")
        await crdkit_client.create(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": f"{name}-scraper"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": f"{name}-metrics-reader",
                },
                "subjects": [
                    {"kind": "ServiceAccount", "name": "scraper", "namespace": operator_namespace}
                ],
            }
        )
        assert await scrape(metrics_port, scraper) == 200
        assert await scrape(metrics_port, token) == 403  # the manager's own: no reader role
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), 60)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    # The manager watches every namespace, so it may meet objects an earlier test left in a
    # namespace being deleted; the apiserver refuses writes there with a 403 that is not RBAC's.
    refusals = [
        line
        for line in log_path.read_text().splitlines()
        if _refused(line) and "being terminated" not in line
    ]
    assert not refusals, refusals


# A refusal names its status as a word; the log's timestamps and reconcile ids are dropped first,
# since ".403+00:00" or a uuid's "-4037-" would read as one.
_REFUSAL = re.compile(r"\b403\b|forbidden", re.IGNORECASE)
_NOT_MESSAGES = ("ts", "reconcileID")


def _refused(line: str) -> bool:
    try:
        record = json.loads(line)
    except ValueError:
        return bool(_REFUSAL.search(line))  # a traceback's lines, or anything not logged as JSON
    if not isinstance(record, dict):
        return bool(_REFUSAL.search(line))
    told = {key: value for key, value in record.items() if key not in _NOT_MESSAGES}
    return bool(_REFUSAL.search(json.dumps(told)))


async def test_a_namespaced_operator_gets_roles_in_the_namespace_it_watches(
    crdkit_client: Client, namespace: str, tmp_path: Path
) -> None:
    name = f"hello-{uuid.uuid4().hex[:6]}"
    documents = generate(
        tmp_path, name, "--watch-namespace", namespace, "--no-leader-elect", "--metrics-insecure"
    )
    roles = [(d["kind"], d["metadata"].get("namespace")) for d in documents if "Role" in d["kind"]]
    # the Hello kind is namespaced: no ClusterRole at all (plain metrics need no token reviews),
    # and no leader-election Role
    assert sorted(roles) == [("Role", namespace), ("RoleBinding", namespace)]
    [deployment] = [d for d in documents if d["kind"] == "Deployment"]
    command = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[command.index("--namespace") + 1] == namespace
    assert "--leader-elect" not in command
    await apply(
        crdkit_client, next(d for d in documents if d["kind"] == "Namespace"), dry_run=False
    )
    for document in documents:
        await apply(crdkit_client, document, dry_run=True)
