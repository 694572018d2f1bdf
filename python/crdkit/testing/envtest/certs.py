"""Certificates for a throwaway control plane.

One CA signs the apiserver's serving certificate (valid for 127.0.0.1 and localhost) and an
admin client certificate in ``system:masters``, which RBAC lets do anything. A separate key
signs service-account tokens. The X.509 details are in :mod:`crdkit._pki`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives import serialization

from crdkit._pki import CertificateAuthority, new_key, write_cert, write_key

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Pki", "generate_pki"]

VALIDITY = dt.timedelta(days=7)


@dataclass(frozen=True)
class Pki:
    """Paths of the PEM files written by :func:`generate_pki`."""

    ca_cert: Path
    serving_cert: Path
    serving_key: Path
    client_cert: Path
    client_key: Path
    service_account_key: Path
    service_account_pub: Path


def generate_pki(directory: Path, *, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> Pki:
    """Write a fresh CA, serving and admin certificates and a service-account key pair."""
    directory.mkdir(parents=True, exist_ok=True)
    pki = Pki(
        ca_cert=directory / "ca.crt",
        serving_cert=directory / "apiserver.crt",
        serving_key=directory / "apiserver.key",
        client_cert=directory / "admin.crt",
        client_key=directory / "admin.key",
        service_account_key=directory / "sa.key",
        service_account_pub=directory / "sa.pub",
    )
    ca = CertificateAuthority("crdkit-envtest-ca", validity=VALIDITY)
    write_cert(pki.ca_cert, ca.cert)
    serving_cert, serving_key = ca.serving("kube-apiserver", hosts)
    write_cert(pki.serving_cert, serving_cert)
    write_key(pki.serving_key, serving_key)
    client_cert, client_key = ca.client("admin", "system:masters")
    write_cert(pki.client_cert, client_cert)
    write_key(pki.client_key, client_key)

    sa_key = new_key()
    write_key(pki.service_account_key, sa_key)
    pki.service_account_pub.write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return pki
