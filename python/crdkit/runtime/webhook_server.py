"""The HTTPS server of admission webhooks (``POST`` of ``AdmissionReview`` v1).

aiohttp's web server (imported only here, and this module only when webhooks are enabled, so
``import crdkit.runtime`` stays light) serves the paths of each :class:`Webhook`; an unknown
path is 404, a body that is not an ``AdmissionReview`` 400. Every answer closes its connection:
the apiserver then never sends a request on a connection the server is closing, which it would
not retry, and each request's handshake meets the current certificate.

The listening socket is bound with ``SO_REUSEPORT``, so a replacement server can listen on the
port before this one stops; on stop, the socket closes first and requests in flight finish.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from aiohttp import web

from crdkit.runtime.admission import BadReview, Webhook, review

if TYPE_CHECKING:
    import ssl
    from collections.abc import Sequence

__all__ = ["WebhookServer"]

log = logging.getLogger("crdkit.runtime.webhook")


class WebhookServer:
    """Serves ``webhooks`` over TLS with ``ssl_context`` until :meth:`close`."""

    def __init__(
        self, webhooks: Sequence[Webhook[Any]], ssl_context: ssl.SSLContext, *, grace: float = 10
    ) -> None:
        self.webhooks = list(webhooks)
        self._ssl = ssl_context
        self._grace = grace
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None
        self.requests = 0
        """Reviews answered (allowed or not), for tests and logs."""

    def _app(self) -> web.Application:
        app = web.Application(client_max_size=8 * 1024 * 1024)
        seen: dict[str, Webhook[Any]] = {}
        for webhook in self.webhooks:
            for path, mutate, present in (
                (webhook.validate_path, False, webhook.validator is not None),
                (webhook.mutate_path, True, webhook.defaulter is not None),
            ):
                if not present:
                    continue
                if path in seen:
                    raise ValueError(f"two webhooks serve {path}: one per kind")
                seen[path] = webhook
                app.router.add_post(path, self._handler(webhook, mutate=mutate))
        return app

    def _handler(self, webhook: Webhook[Any], *, mutate: bool) -> Any:
        async def handle(request: web.Request) -> web.Response:
            try:
                body = json.loads(await request.read())
                answer = await review(webhook, body, mutate=mutate)
            except (ValueError, BadReview) as error:  # json's errors are ValueErrors
                response = web.Response(status=400, text=f"not an AdmissionReview: {error}\n")
            else:
                self.requests += 1
                response = web.json_response(answer)
            response.force_close()
            return response

        return handle

    async def start(self, host: str, port: int) -> None:
        """Bind (``port`` 0: a free one, see :attr:`port`) and serve."""
        runner = web.AppRunner(
            self._app(), access_log=None, handle_signals=False, shutdown_timeout=self._grace
        )
        await runner.setup()
        site = web.TCPSite(runner, host, port, ssl_context=self._ssl, reuse_port=True)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner, self._site = runner, site

    @property
    def port(self) -> int:
        """The port actually bound."""
        if self._runner is None or not self._runner.addresses:
            raise RuntimeError("the webhook server is not started")
        return int(self._runner.addresses[0][1])

    async def close(self) -> None:
        """Stop listening, let requests in flight finish (up to ``grace`` seconds), stop."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = self._site = None
