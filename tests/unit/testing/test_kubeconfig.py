"""The kubeconfig: embedded certificates, one context, owner-only."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from crdkit.testing.certs import generate_pki
from crdkit.testing.kubeconfig import write_kubeconfig


def test_kubeconfig_embeds_the_admin_identity(tmp_path: Path) -> None:
    pki = generate_pki(tmp_path / "pki")
    path = write_kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:6443", pki)
    config = yaml.safe_load(path.read_text())
    assert config["current-context"] == "envtest"
    cluster = config["clusters"][0]["cluster"]
    assert cluster["server"] == "https://127.0.0.1:6443"
    assert base64.b64decode(cluster["certificate-authority-data"]) == pki.ca_cert.read_bytes()
    user = config["users"][0]["user"]
    assert base64.b64decode(user["client-certificate-data"]) == pki.client_cert.read_bytes()
    assert base64.b64decode(user["client-key-data"]) == pki.client_key.read_bytes()
    assert path.stat().st_mode & 0o077 == 0
