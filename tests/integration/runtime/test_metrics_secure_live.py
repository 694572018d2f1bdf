"""Secure metrics on the real apiserver: HTTPS with the given certificate, and only bearer
tokens RBAC allows ``get /metrics`` are served (TokenReview, then SubjectAccessReview)."""

from __future__ import annotations

import asyncio
import ssl
import uuid
from pathlib import Path

import pytest
from _runtime_support import HELLO_CRD
from examples.hello.operator import HelloReconciler

from crdkit.client import Client
from crdkit.testing import ControlPlane
from crdkit.testing.envtest.users import service_account_token
from crdkit.testing.operator import OperatorRunner
from crdkit.webhook.certs import write_self_signed

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


async def https_get(port: int, ca: Path, token: str | None) -> tuple[int, str]:
    context = ssl.create_default_context(cafile=str(ca))
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=context, server_hostname="localhost"
    )
    auth = f"Authorization: Bearer {token}\r\n" if token is not None else ""
    writer.write(f"GET /metrics HTTP/1.1\r\nHost: localhost\r\n{auth}\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode()


async def reader_token(client: Client, namespace: str, name: str, *, allowed: bool) -> str:
    token = await service_account_token(client, namespace, name)
    if allowed:
        role = f"{name}-{uuid.uuid4().hex[:6]}"
        await client.create(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": role},
                "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
            }
        )
        await client.create(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": role},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": role,
                },
                "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
            }
        )
    return token


async def test_only_tokens_rbac_allows_read_the_metrics(
    control_plane: ControlPlane,
    crdkit_client: Client,
    namespace: str,
    operator: OperatorRunner,
    tmp_path: Path,
) -> None:
    await control_plane.install_crds([HELLO_CRD])
    write_self_signed(tmp_path, ["localhost", "127.0.0.1"])
    manager = await operator.start(
        HelloReconciler, namespace=namespace, metrics_secure=True, metrics_cert_dir=tmp_path
    )
    assert manager.metrics_port is not None
    port, ca = manager.metrics_port, tmp_path / "ca.crt"
    prometheus = await reader_token(crdkit_client, namespace, "prometheus", allowed=True)
    stranger = await reader_token(crdkit_client, namespace, "stranger", allowed=False)

    status, body = await https_get(port, ca, prometheus)
    assert status == 200, body
    assert 'controller_runtime_max_concurrent_reconciles{controller="hello"}' in body

    status, body = await https_get(port, ca, stranger)
    assert status == 403
    assert f"system:serviceaccount:{namespace}:stranger may not get" in body
    assert (await https_get(port, ca, None))[0] == 401
    assert (await https_get(port, ca, "not-a-token"))[0] == 401
