"""Restricted identities on the local control plane: a ServiceAccount, the rules it may use,
a token from the TokenRequest API, and a kubeconfig that authenticates with only that token.

The control plane's own kubeconfig is ``system:masters``, which RBAC never refuses; a test of
what an operator does without some right (a 403 on list, say) needs a user RBAC does apply to::

    kubeconfig = await restricted_kubeconfig(
        admin, plane, namespace, "no-list",
        rules=[{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
        path=tmp_path / "kubeconfig",
    )
    async with await Client.from_kubeconfig(kubeconfig) as client:
        ...  # list pods: 403 Forbidden

The rules are a Role (and RoleBinding) in ``namespace``; the ServiceAccount lives there too.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from crdkit.client import Client
    from crdkit.testing.envtest.control_plane import ControlPlane

__all__ = ["restricted_kubeconfig", "service_account_token", "token_kubeconfig"]


async def service_account_token(
    client: Client,
    namespace: str,
    name: str,
    *,
    expiration_seconds: int = 3600,
    create: bool = True,
) -> str:
    """Create the ServiceAccount ``namespace/name`` (unless ``create=False``: it exists, e.g.
    from an operator's manifests) and return a fresh token for it."""
    if create:
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": name, "namespace": namespace},
            }
        )
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": expiration_seconds},
    }
    answer = await client.transport.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
        body=json.dumps(request).encode(),
        content_type="application/json",
    )
    token: str = json.loads(answer)["status"]["token"]
    return token


def token_kubeconfig(
    path: Path, control_plane: ControlPlane, token: str, *, user: str, namespace: str
) -> Path:
    """Write a kubeconfig for ``control_plane`` that authenticates with ``token`` only."""
    import yaml

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "local",
                "cluster": {
                    "server": control_plane.server_url,
                    "certificate-authority": str(control_plane.ca_file),
                },
            }
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [
            {"name": user, "context": {"cluster": "local", "user": user, "namespace": namespace}}
        ],
        "current-context": user,
    }
    path.write_text(yaml.safe_dump(config))
    return path


async def restricted_kubeconfig(
    client: Client,
    control_plane: ControlPlane,
    namespace: str,
    name: str,
    *,
    rules: Sequence[dict[str, Any]],
    path: Path,
) -> Path:
    """A ServiceAccount ``namespace/name`` allowed exactly ``rules`` in ``namespace`` (a Role
    and its RoleBinding, made with the admin ``client``), and a kubeconfig at ``path`` for it."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": name, "namespace": namespace},
        "rules": list(rules),
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
    }
    token = await service_account_token(client, namespace, name)
    await client.create(role)
    await client.create(binding)
    return token_kubeconfig(path, control_plane, token, user=name, namespace=namespace)
