"""The Manager's side of admission webhooks: certificates, the server, and in development the
webhook configurations pointing at it.

The runner is told its options whole (:class:`RunnerOptions`: a manager passes its options'
``webhook`` group, :class:`crdkit.runtime.WebhookServerOptions`). Without ``cert_dir`` a CA
and a serving certificate for ``hosts`` are made in a temporary directory (removed on close)
and :attr:`WebhookRunner.ca_bundle` is that CA. With ``cert_dir`` (cert-manager's Secret
mounted there) the pair is read from ``tls.crt``/``tls.key`` and followed as it is renewed;
``ca_bundle`` is its ``ca.crt`` when there is one.

``install`` names the configurations the runner server-side applies once serving, with a URL
client config (``url``, default ``https://127.0.0.1:<port>``) and ``ca_bundle``: a manager on a
developer's machine, or a test's local control plane. In a cluster, ``crdkit gen-webhooks``
writes them instead.

The server and certificate modules (ssl, cryptography) are imported on start, so a
manager without webhooks never loads them.
"""

from __future__ import annotations

import functools
import logging
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from crdkit._addresses import parse_bind_address

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from crdkit.client import Client
    from crdkit.webhook.admission import Webhook
    from crdkit.webhook.certs import CertWatcher
    from crdkit.webhook.conversion import Conversion
    from crdkit.webhook.server import WebhookServer

__all__ = ["FIELD_MANAGER", "RunnerOptions", "WebhookRunner", "serving_address"]

log = logging.getLogger("crdkit.webhook")

_INSTALL_ATTEMPTS = 5


async def _resent_on_lost_answers(write: Callable[[], Awaitable[object]]) -> None:
    """Make an idempotent write (an apply, a merge patch of fixed content), sending it again
    when the connection fails without an answer. One reset connection used to fail the
    manager's start, so the operator crash-looped on a network blip (crash tests: a lost
    answer of a webhook configuration's apply); sent again, the write changes nothing more."""
    import asyncio

    from crdkit.client import TransportError

    for attempt in range(_INSTALL_ATTEMPTS):
        try:
            await write()
            return
        except TransportError as error:
            if attempt == _INSTALL_ATTEMPTS - 1:
                raise
            log.warning("webhook install: %s; sending it again", error)
            await asyncio.sleep(0.2 * 2**attempt)


FIELD_MANAGER = "crdkit-webhooks"


class RunnerOptions(Protocol):
    """What a runner is told. The runtime's ``WebhookServerOptions`` is one; it is spelled here
    as a protocol because the webhook room sits below the runtime and cannot import it."""

    @property
    def bind_address(self) -> str:
        """Where to serve, ``":9443"`` or ``"host:port"``."""

    @property
    def cert_dir(self) -> Path | None:
        """``tls.crt`` and ``tls.key`` to serve, reloaded when renewed; ``None``: self-signed."""

    @property
    def hosts(self) -> Sequence[str]:
        """The names of the self-signed pair made when there is no ``cert_dir``."""

    @property
    def install(self) -> str | None:
        """The name of the webhook configurations to apply once serving (development)."""

    @property
    def url(self) -> str | None:
        """Where the installed configurations call (default ``https://127.0.0.1:<port>``)."""


def serving_address(options: RunnerOptions) -> tuple[str, int]:
    """``options.bind_address`` as host and port; ``ValueError`` naming
    ``webhook_bind_address`` for a bad one, or for ``"0"``: webhooks cannot be turned off by
    address (add none instead)."""
    address = parse_bind_address(options.bind_address, field="webhook_bind_address")
    if address is None:
        raise ValueError("webhook_bind_address cannot be '0': add no webhooks instead")
    return address


class WebhookRunner:
    """Starts and stops the webhook server of a manager; see the module docstring."""

    def __init__(
        self,
        webhooks: Sequence[Webhook[Any]],
        options: RunnerOptions,
        *,
        conversions: Sequence[Conversion] = (),
    ) -> None:
        self.webhooks = list(webhooks)
        self.conversions = list(conversions)
        self.options = options
        self.address = serving_address(options)
        self.ca_bundle: bytes | None = None
        self.server: WebhookServer | None = None
        self.certs: CertWatcher | None = None
        self._temporary: Path | None = None

    @property
    def port(self) -> int:
        if self.server is None:
            raise RuntimeError("the webhook server is not started")
        return self.server.port

    def _certificates(self) -> Path:
        from crdkit.webhook.certs import CA_FILE, write_self_signed

        if self.options.cert_dir is not None:
            cert_dir = Path(self.options.cert_dir)
            ca = cert_dir / CA_FILE
            self.ca_bundle = ca.read_bytes() if ca.is_file() else None
            return cert_dir
        hosts = tuple(self.options.hosts)
        self._temporary = Path(tempfile.mkdtemp(prefix="crdkit-webhook-certs-"))
        self.ca_bundle = write_self_signed(self._temporary, hosts)
        log.info("webhook serving a self-signed certificate for %s", ", ".join(hosts))
        return self._temporary

    async def start(self, client: Client) -> None:
        from crdkit.webhook.certs import CertWatcher
        from crdkit.webhook.server import WebhookServer

        self.certs = CertWatcher(self._certificates())
        self.server = WebhookServer(self.webhooks, self.certs.context, conversions=self.conversions)
        await self.server.start(*self.address)
        log.info(
            "webhook server listening",
            extra={"fields": {"port": self.port, "webhooks": len(self.webhooks)}},
        )
        if self.options.install is not None:
            await self._install(client)

    def advertised_url(self) -> str:
        """Where the apiserver is told to call: ``url``, or this machine's loopback and port."""
        if self.options.url is not None:
            return self.options.url
        host = self.address[0]
        host = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
        return f"https://{f'[{host}]' if ':' in host else host}:{self.port}"

    async def _install(self, client: Client) -> None:
        from crdkit.webhook.configuration import webhook_configurations

        name = self.options.install
        assert name is not None
        if self.webhooks:
            for configuration in webhook_configurations(
                self.webhooks,
                name=name,
                url=self.advertised_url(),
                ca_bundle=self.ca_bundle,
            ):
                await _resent_on_lost_answers(
                    functools.partial(
                        client.apply, configuration, field_manager=FIELD_MANAGER, force=True
                    )
                )
                log.info("applied %s %s", configuration["kind"], name)
        for conversion in self.conversions:
            await self._point_crd(client, conversion)

    async def _point_crd(self, client: Client, conversion: Conversion) -> None:
        """Set the kind's CRD to convert through this server (a merge patch of its
        ``spec.conversion``: the rest of the CRD stays as installed)."""
        import base64

        from crdkit.client import GroupVersionKind, PatchType
        from crdkit.resources import resource_info
        from crdkit.webhook.conversion import CONVERT_PATH

        info = resource_info(conversion.hub)
        client_config: dict[str, Any] = {"url": self.advertised_url() + CONVERT_PATH}
        if self.ca_bundle is not None:
            client_config["caBundle"] = base64.b64encode(self.ca_bundle).decode()
        patch = {
            "spec": {
                "conversion": {
                    "strategy": "Webhook",
                    "webhook": {
                        "clientConfig": client_config,
                        "conversionReviewVersions": ["v1"],
                    },
                }
            }
        }
        await _resent_on_lost_answers(
            lambda: client.patch(
                GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
                f"{info.plural}.{info.group}",
                patch,
                patch_type=PatchType.MERGE,
            )
        )
        log.info("pointed the CRD of %s at %s", info.kind, client_config["url"])

    async def close(self) -> None:
        if self.server is not None:
            await self.server.close()
            self.server = None
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)
            self._temporary = None
