"""crdkit's own kubeconfig loader against the real apiserver: the control plane's certificate
kubeconfig, and service-account tokens given as a token, a token file and an exec plugin."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from crdkit.client import Client, Forbidden
from crdkit.resources import Namespace
from crdkit.testing import ControlPlane
from crdkit.testing.envtest.users import service_account_token

pytestmark = pytest.mark.integration

REVIEW = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


async def whoami(client: Client) -> str:
    """The user name the apiserver authenticated (every authenticated user may ask)."""
    body = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    answer = await client.transport.request(
        "POST", REVIEW, body=body.encode(), content_type="application/json"
    )
    name: str = json.loads(answer)["status"]["userInfo"]["username"]
    return name


async def test_the_control_planes_kubeconfig_loads_and_talks(control_plane: ControlPlane) -> None:
    async with await Client.from_kubeconfig(control_plane.kubeconfig_path) as client:
        default = await client.get(Namespace, "default")
        assert default.metadata.name == "default"
        assert await whoami(client) == "admin"


def token_kubeconfig(
    plane: ControlPlane, folder: Path, users: dict[str, dict[str, Any]]
) -> tuple[Path, dict[str, Any]]:
    """The control plane's kubeconfig with one context per extra user; the CA as a file."""
    config = yaml.safe_load(plane.kubeconfig_path.read_text())
    cluster = config["clusters"][0]
    (folder / "ca.crt").write_bytes(plane.ca_file.read_bytes())
    del cluster["cluster"]["certificate-authority-data"]
    cluster["cluster"]["certificate-authority"] = "ca.crt"  # relative to the kubeconfig
    for name, user in users.items():
        config["users"].append({"name": name, "user": user})
        config["contexts"].append(
            {"name": name, "context": {"cluster": cluster["name"], "user": name}}
        )
    path = folder / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path, config


async def test_tokens_from_a_string_a_file_and_an_exec_plugin(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str, tmp_path: Path
) -> None:
    token = await service_account_token(crdkit_client, namespace, "robot")
    (tmp_path / "token").write_text(token)
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": token},
    }
    (tmp_path / "plugin.py").write_text(f"print({json.dumps(json.dumps(credential))})\n")
    exec_config = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": sys.executable,
        "args": [str(tmp_path / "plugin.py")],
        "interactiveMode": "Never",
    }
    path, _ = token_kubeconfig(
        control_plane,
        tmp_path,
        {"static": {"token": token}, "file": {"tokenFile": "token"}, "exec": {"exec": exec_config}},
    )
    robot = f"system:serviceaccount:{namespace}:robot"
    for context in ("static", "file", "exec"):
        async with await Client.from_kubeconfig(path, context=context, exec_timeout=20) as client:
            assert await whoami(client) == robot, context
            with pytest.raises(Forbidden):  # authenticated as the robot, which may do nothing
                await client.get(Namespace, namespace)
