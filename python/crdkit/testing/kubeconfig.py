"""The kubeconfig that points kubectl and clients at a local control plane."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from pathlib import Path

    from crdkit.testing.certs import Pki

__all__ = ["write_kubeconfig"]

CONTEXT = "envtest"


def _data(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def write_kubeconfig(path: Path, server_url: str, pki: Pki) -> Path:
    """Write a kubeconfig with the certificates embedded, so a copy works on its own."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": CONTEXT,
                "cluster": {
                    "server": server_url,
                    "certificate-authority-data": _data(pki.ca_cert),
                },
            }
        ],
        "users": [
            {
                "name": "admin",
                "user": {
                    "client-certificate-data": _data(pki.client_cert),
                    "client-key-data": _data(pki.client_key),
                },
            }
        ],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": "admin"}}],
        "current-context": CONTEXT,
        "preferences": {},
    }
    path.touch(mode=0o600)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path
