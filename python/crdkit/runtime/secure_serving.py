"""HTTPS to the bearer tokens RBAC allows, for any of the runtime's small servers.

``/metrics`` serves this way (`crdkit.runtime.metrics_server`), and so does the scheduler's live
page (``crdkit scheduler --ui``): the certificate pair in a directory (reloaded when renewed)
or, without one, a self-signed pair made for the server's lifetime, and every request's token
checked by
`crdkit.runtime.metrics_auth.MetricsAuthorizer` for ``get`` on the request's path (a
non-resource URL, so RBAC grants it with ``nonResourceURLs``).
"""

from __future__ import annotations

import shutil
import socket
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from crdkit.runtime.http import HttpServer, Route

if TYPE_CHECKING:
    from collections.abc import Mapping

    from crdkit.client.client import Client

__all__ = ["close_served", "secure_server"]


def secure_server(
    routes: Mapping[str, Route], *, client: Client, cert_dir: Path | None, scratch_prefix: str
) -> tuple[HttpServer, Path | None]:
    """An HTTPS server of ``routes`` that asks RBAC about every caller's token, and the scratch
    directory of its self-signed pair (made when ``cert_dir`` is ``None``; the caller deletes
    it once the server is closed)."""
    from crdkit.runtime.metrics_auth import MetricsAuthorizer
    from crdkit.webhook.certs import CertWatcher, write_self_signed

    scratch = None
    directory = cert_dir
    if directory is None:
        # A self-signed pair, made where a read-only root still lets the process write.
        directory = scratch = Path(tempfile.mkdtemp(prefix=scratch_prefix))
        write_self_signed(directory, ("localhost", "127.0.0.1", socket.gethostname()))
    watcher = CertWatcher(Path(directory))
    server = HttpServer(routes, ssl_context=watcher.context, authorize=MetricsAuthorizer(client))
    return server, scratch


async def close_served(server: HttpServer | None, scratch: Path | None) -> None:
    """Stop ``server`` (if it runs) and delete the scratch directory of its self-signed pair
    (if one was made): what a server of `secure_server`, or a plain one, leaves to close."""
    if server is not None:
        await server.close()
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)
