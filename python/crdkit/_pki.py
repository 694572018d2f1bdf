"""X.509 building blocks shared by the test control plane's PKI and the webhook server's
development certificates (``crdkit.testing`` may not import the runtime, nor the runtime the
testing package, so both use this module).

Keys are ECDSA P-256: quick to generate, accepted by Go's TLS stack and OpenSSL alike.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from typing import TYPE_CHECKING

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

__all__ = [
    "BACKDATE",
    "CertificateAuthority",
    "new_key",
    "pem_cert",
    "pem_key",
    "write_cert",
    "write_key",
]

# A little slack backwards so that clocks a few minutes apart do not reject a fresh certificate.
BACKDATE = dt.timedelta(hours=1)


def new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name: str, organization: str | None = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization is not None:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


def _builder(
    subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey, validity: dt.timedelta
) -> x509.CertificateBuilder:
    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + validity)
    )


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def _subject_alt_names(hosts: Iterable[str]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


class CertificateAuthority:
    """A self-signed CA (its own key, in memory) that issues serving and client certificates."""

    def __init__(self, common_name: str, *, validity: dt.timedelta) -> None:
        self.validity = validity
        self.key = new_key()
        self.name = _name(common_name)
        self.cert = (
            _builder(self.name, self.name, self.key, validity)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(_key_usage(cert_sign=True), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), False)
            .sign(self.key, hashes.SHA256())
        )

    def _leaf(
        self,
        subject: x509.Name,
        usage: x509.ObjectIdentifier,
        hosts: Iterable[str] = (),
    ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        key = new_key()
        builder = (
            _builder(subject, self.name, key, self.validity)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_key_usage(cert_sign=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        hosts = tuple(hosts)
        if hosts:
            builder = builder.add_extension(_subject_alt_names(hosts), critical=False)
        return builder.sign(self.key, hashes.SHA256()), key

    def serving(
        self, common_name: str, hosts: Iterable[str]
    ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        """A server certificate valid for ``hosts`` (IP addresses or DNS names)."""
        return self._leaf(_name(common_name), ExtendedKeyUsageOID.SERVER_AUTH, hosts)

    def client(
        self, user: str, group: str | None = None
    ) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        """A client certificate for ``user`` (CN) in ``group`` (O), as the apiserver reads them."""
        return self._leaf(_name(user, group), ExtendedKeyUsageOID.CLIENT_AUTH)


def pem_cert(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def write_cert(path: Path, cert: x509.Certificate) -> None:
    path.write_bytes(pem_cert(cert))


def write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    path.touch(mode=0o600)
    path.write_bytes(pem_key(key))
