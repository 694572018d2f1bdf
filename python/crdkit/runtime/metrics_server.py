"""``/metrics`` as a :class:`~crdkit.runtime.manager_options.MetricsOptions` says.

The manager hands its options' ``metrics`` group to this server whole, as controller-runtime's
manager hands ``Options.Metrics`` to its metrics server, so what the group means (the default
address for plain or secure serving, the warning about plain HTTP off loopback, where the
certificate comes from) is read in one place.

Plain HTTP serves anyone who reaches the address, which is loopback unless told otherwise.
``secure`` serves HTTPS to the bearer tokens RBAC allows ``get /metrics`` (checked by
``crdkit.runtime.metrics_auth``), with the pair in ``cert_dir`` (reloaded when renewed) or,
without one, a self-signed pair made for the server's lifetime, as controller-runtime does.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from crdkit._addresses import is_loopback
from crdkit.runtime.http import HttpServer, Response, parse_bind_address
from crdkit.runtime.metrics import runtime_metrics
from crdkit.runtime.secure_serving import close_served, secure_server

if TYPE_CHECKING:
    from pathlib import Path

    from prometheus_client import CollectorRegistry

    from crdkit.client.client import Client
    from crdkit.runtime.manager_options import MetricsOptions

__all__ = ["MetricsServer"]

# The manager's logger: the warning about plain metrics was always the manager's, and log
# configurations select it by that name.
log = logging.getLogger("crdkit.runtime.manager")


class MetricsServer:
    """Serves ``registry`` at ``/metrics`` as ``options`` say, from :meth:`start` to
    :meth:`close`; nothing at all when the address is ``"0"``."""

    def __init__(
        self, options: MetricsOptions, *, client: Client, registry: CollectorRegistry
    ) -> None:
        """The address is read now, so a bad one fails when the manager is built rather than
        once it runs (``ValueError`` naming ``metrics_bind_address``). ``client`` checks the
        callers' tokens when serving securely."""
        self.options = options
        self.address = parse_bind_address(options.address, field="metrics_bind_address")
        """Host and port to serve on; ``None``: metrics are off."""
        self._client = client
        self._registry = registry
        self._tasks = runtime_metrics(registry).asyncio_tasks
        self._server: HttpServer | None = None
        self._scratch: Path | None = None  # the self-signed pair's directory, deleted on close

    @property
    def port(self) -> int | None:
        """The port served (an ephemeral one if the address asked for port 0); ``None``
        until started, or when metrics are off."""
        return self._server.port if self._server is not None else None

    async def start(self) -> None:
        if self.address is None:
            return
        if not self.options.secure and not is_loopback(self.address[0]):
            log.warning(
                "serving /metrics over plain HTTP to anyone who can reach %s:%d; "
                "--metrics-secure serves it over HTTPS to tokens RBAC allows",
                *self.address,
            )
        server = self._secure_server() if self.options.secure else self._plain_server()
        await server.start(*self.address)
        self._server = server

    async def close(self) -> None:
        server, scratch, self._server, self._scratch = self._server, self._scratch, None, None
        await close_served(server, scratch)

    def _plain_server(self) -> HttpServer:
        return HttpServer({"/metrics": self._metrics})

    def _secure_server(self) -> HttpServer:
        server, self._scratch = secure_server(
            {"/metrics": self._metrics},
            client=self._client,
            cert_dir=self.options.cert_dir,
            scratch_prefix="crdkit-metrics-",
        )
        return server

    async def _metrics(self) -> Response:
        # Counted here, in the served loop: no other thread may ask a loop for its tasks.
        self._tasks.set(len(asyncio.all_tasks()))
        return Response(200, generate_latest(self._registry), CONTENT_TYPE_LATEST)
