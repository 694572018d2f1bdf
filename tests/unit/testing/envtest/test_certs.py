"""Generated certificates: who signs what, for which names and uses."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from crdkit.testing.envtest.certs import Pki, generate_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return generate_pki(tmp_path_factory.mktemp("pki"))


def _cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_ca_is_self_signed_ca(pki: Pki) -> None:
    ca = _cert(pki.ca_cert)
    assert ca.issuer == ca.subject
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    ca.verify_directly_issued_by(ca)


def test_serving_cert_covers_loopback_names(pki: Pki) -> None:
    ca, serving = _cert(pki.ca_cert), _cert(pki.serving_cert)
    serving.verify_directly_issued_by(ca)
    sans = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("127.0.0.1") in sans.get_values_for_type(x509.IPAddress)
    assert "localhost" in sans.get_values_for_type(x509.DNSName)
    usage = serving.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.SERVER_AUTH in usage


def test_admin_client_cert_is_in_system_masters(pki: Pki) -> None:
    ca, client = _cert(pki.ca_cert), _cert(pki.client_cert)
    client.verify_directly_issued_by(ca)
    assert client.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "admin"
    orgs = client.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    assert [o.value for o in orgs] == ["system:masters"]
    usage = client.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.CLIENT_AUTH in usage


def test_keys_match_their_certificates(pki: Pki) -> None:
    from cryptography.hazmat.primitives.serialization import (
        load_pem_private_key,
        load_pem_public_key,
    )

    for cert_path, key_path in (
        (pki.serving_cert, pki.serving_key),
        (pki.client_cert, pki.client_key),
    ):
        key = load_pem_private_key(key_path.read_bytes(), password=None)
        assert key.public_key() == _cert(cert_path).public_key()
    sa_key = load_pem_private_key(pki.service_account_key.read_bytes(), password=None)
    assert isinstance(sa_key, ec.EllipticCurvePrivateKey)
    assert load_pem_public_key(pki.service_account_pub.read_bytes()) == sa_key.public_key()


def test_private_keys_are_owner_only(pki: Pki) -> None:
    for path in (pki.serving_key, pki.client_key, pki.service_account_key):
        assert path.stat().st_mode & 0o077 == 0
