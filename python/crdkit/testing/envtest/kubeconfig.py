"""The kubeconfig that points kubectl and clients at a local control plane.

It holds the admin key, so it is only ever written by :func:`write_private`: owner-only from
its first byte, put in place by one rename, and never through a symbolic link.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import os
import tempfile
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from pathlib import Path

    from crdkit.testing.envtest.certs import Pki

__all__ = ["write_kubeconfig", "write_private"]

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
    write_private(path, yaml.safe_dump(config, sort_keys=False).encode())
    return path


def _refuse_symlink(path: Path) -> None:
    if path.is_symlink():
        raise OSError(errno.ELOOP, "is a symbolic link; refusing to write through it", str(path))


def write_private(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data``, mode 0600, atomically; refuse a symbolic link at ``path``.

    A link would send the admin key wherever it points. Writing in place would too, through a
    hard link, and a reader (or a crash) could see half a file. So the data goes to a new file
    in the same folder (``mkstemp``: ``O_EXCL | O_NOFOLLOW``, 0600), is flushed to disk, and is
    renamed over ``path``. A rename replaces a link put at ``path`` meanwhile, never follows it.
    """
    _refuse_symlink(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            os.fchmod(file.fileno(), 0o600)  # exact, whatever the umask took away
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        _refuse_symlink(path)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    # The rename is durable once the folder is; some filesystems cannot fsync a folder.
    with contextlib.suppress(OSError):
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
