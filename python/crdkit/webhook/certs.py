"""The webhook server's TLS: a serving certificate read from a directory (cert-manager's
layout: ``tls.crt``, ``tls.key``, maybe ``ca.crt``) and reloaded when the files change, or a
self-signed one for development.

Reloading happens during the TLS handshake: each ClientHello reads the two files (a few
hundred bytes, beside a handshake's own cost) and, when their content changed, loads them into
a fresh ``SSLContext`` that this and later handshakes use. Content, not mtime: a file rewritten
in place within the filesystem's timestamp granularity would look unchanged. Connections
already open keep theirs, nothing is dropped, and no timer is needed. Files caught half-written
fail to load: the old certificate is kept (and a warning logged once) until a later handshake
finds a pair that loads.
"""

from __future__ import annotations

import datetime as dt
import logging
import ssl
from typing import TYPE_CHECKING

from crdkit._pki import CertificateAuthority, pem_cert, write_cert, write_key

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

__all__ = ["CertWatcher", "write_self_signed"]

log = logging.getLogger("crdkit.webhook")

CERT_FILE = "tls.crt"
KEY_FILE = "tls.key"
CA_FILE = "ca.crt"
DEV_VALIDITY = dt.timedelta(days=365)

_Signature = tuple[bytes, bytes]


def write_self_signed(directory: Path, hosts: Iterable[str]) -> bytes:
    """Write a new CA's ``ca.crt`` and a ``tls.crt``/``tls.key`` it signs for ``hosts`` into
    ``directory``; the CA's PEM (the webhook configurations' ``caBundle``)."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = CertificateAuthority("crdkit-webhook-ca", validity=DEV_VALIDITY)
    cert, key = ca.serving("crdkit-webhook", hosts)
    write_cert(directory / CA_FILE, ca.cert)
    # The key first: a watcher that sees the new certificate then finds its key already there.
    write_key(directory / KEY_FILE, key)
    write_cert(directory / CERT_FILE, cert)
    return pem_cert(ca.cert)


class CertWatcher:
    """The server ``SSLContext`` of the pair in ``directory``, following the files' changes."""

    def __init__(
        self, directory: Path, *, cert_file: str = CERT_FILE, key_file: str = KEY_FILE
    ) -> None:
        self.cert_path = directory / cert_file
        self.key_path = directory / key_file
        self._failed: _Signature | None = None
        self.reloads = 0
        """How many times a changed pair was loaded (not counting the first)."""
        signature = self._signature()
        if signature is None:
            raise FileNotFoundError(
                f"webhook certificate: {self.cert_path} and {self.key_path} must both exist"
            )
        # Raises ssl.SSLError at start for a bad pair: a server that cannot serve should not run.
        self._current = self._load()
        self._signature_loaded = signature
        self.context = self._load()
        self.context.sni_callback = self._pick

    def _signature(self) -> _Signature | None:
        # Read before loading: if the files change in between, the next handshake reads a
        # content other than the one recorded and loads again.
        try:
            return (self.cert_path.read_bytes(), self.key_path.read_bytes())
        except OSError:  # missing or unreadable for a moment: keep what is loaded
            return None

    def _load(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(self.cert_path, self.key_path)
        return context

    def refresh(self) -> ssl.SSLContext:
        """The context for a new handshake: the files' pair, reloaded if they changed."""
        signature = self._signature()
        if signature is None or signature == self._signature_loaded or signature == self._failed:
            return self._current
        try:
            context = self._load()
        except (ssl.SSLError, OSError) as error:
            # Mid-rotation (certificate and key from different pairs) or unreadable: keep the
            # old pair and try again when the files change once more.
            self._failed = signature
            log.warning("webhook certificate not reloaded, keeping the previous one: %s", error)
            return self._current
        self._current, self._signature_loaded, self._failed = context, signature, None
        self.reloads += 1
        log.info("webhook certificate reloaded from %s", self.cert_path)
        return context

    def _pick(
        self, sock: ssl.SSLObject | ssl.SSLSocket, server_name: str | None, _: object
    ) -> None:
        context = self.refresh()
        if sock.context is not context:
            sock.context = context
