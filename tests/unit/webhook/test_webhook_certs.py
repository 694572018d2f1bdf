"""The serving certificate follows its files: reloaded at the next handshake when they change,
the previous pair kept while the files are caught mid-rotation, a self-signed pair for
development whose CA verifies it."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from cryptography import x509

from crdkit._pki import CertificateAuthority, write_cert, write_key
from crdkit.webhook.certs import CertWatcher, write_self_signed


def _pair(ca: CertificateAuthority, directory: Path, *, key_only: bool = False) -> int:
    cert, key = ca.serving("webhook", ["127.0.0.1"])
    write_key(directory / "tls.key", key)
    if not key_only:
        write_cert(directory / "tls.crt", cert)
    return int(cert.serial_number)


def test_a_changed_pair_is_loaded_and_a_half_written_one_is_not(tmp_path: Path) -> None:
    ca = CertificateAuthority("test-ca", validity=dt.timedelta(days=1))
    _pair(ca, tmp_path)
    watcher = CertWatcher(tmp_path)
    first = watcher.refresh()
    assert watcher.refresh() is first  # unchanged files: the same context, no reload
    _pair(ca, tmp_path, key_only=True)  # the new key, the old certificate: they do not match
    assert watcher.refresh() is first
    assert watcher.reloads == 0
    _pair(ca, tmp_path)
    second = watcher.refresh()
    assert second is not first
    assert watcher.reloads == 1
    assert watcher.refresh() is second


def _padded(path: Path, size: int) -> None:
    # PEM readers skip text outside the BEGIN/END lines: newlines make both pairs one size.
    data = path.read_bytes()
    path.write_bytes(data + b"\n" * (size - len(data)))


def test_a_pair_rewritten_in_place_at_the_same_size_and_mtime_is_reloaded(tmp_path: Path) -> None:
    """Regression: the watcher compared (inode, size, mtime); a rewrite within the filesystem's
    timestamp granularity, at the same size, looked unchanged and was never loaded."""
    ca = CertificateAuthority("test-ca", validity=dt.timedelta(days=1))
    _pair(ca, tmp_path)
    for name in ("tls.crt", "tls.key"):
        _padded(tmp_path / name, 2048)
    stamps = {n: (tmp_path / n).stat().st_mtime_ns for n in ("tls.crt", "tls.key")}
    watcher = CertWatcher(tmp_path)
    first = watcher.refresh()
    _pair(ca, tmp_path)
    for name, stamp in stamps.items():
        _padded(tmp_path / name, 2048)
        os.utime(tmp_path / name, ns=(stamp, stamp))
    assert watcher.refresh() is not first
    assert watcher.reloads == 1


def test_missing_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"tls\.crt and .*tls\.key must both exist"):
        CertWatcher(tmp_path)


def test_the_self_signed_pair_verifies_with_its_ca(tmp_path: Path) -> None:
    bundle = write_self_signed(tmp_path, ["127.0.0.1", "webhook.system.svc"])
    assert bundle == (tmp_path / "ca.crt").read_bytes()
    cert = x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes())
    ca = x509.load_pem_x509_certificate(bundle)
    cert.verify_directly_issued_by(ca)
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["webhook.system.svc"]
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert (tmp_path / "tls.key").stat().st_mode & 0o077 == 0
