"""Credentials that put an ``Authorization`` header on requests and refresh themselves.

Short-lived credentials are the norm on real clusters: projected service-account tokens rotate
hourly, exec plugins (``aws eks get-token``, ``gke-gcloud-auth-plugin``) hand out tokens that
expire in minutes. A long-running operator that read its token once stops working after that,
so each source here knows when to fetch again, and the transport calls ``invalidate()`` on a
401 to force one refresh before giving up.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from crdkit.client.errors import ConfigError

__all__ = [
    "Credentials",
    "ExecCredentials",
    "NoCredentials",
    "StaticCredentials",
    "TokenFileCredentials",
]


class Credentials(Protocol):
    """What the transport needs: the current header value, and a way to drop a refused one."""

    async def authorization(self) -> str | None:
        """The ``Authorization`` header value (``Bearer ...``), or ``None`` to send none."""
        ...

    def invalidate(self) -> None:
        """Forget the cached credential: the server refused it."""
        ...


class NoCredentials:
    """No header: authentication by client certificate, or an unauthenticated endpoint."""

    async def authorization(self) -> str | None:
        return None

    def invalidate(self) -> None:
        return None


class StaticCredentials:
    """A fixed header value (a static token or basic auth from a kubeconfig)."""

    def __init__(self, header: str) -> None:
        if not header.strip():
            raise ConfigError("authorization header must not be empty")
        self._header = header

    async def authorization(self) -> str | None:
        return self._header

    def invalidate(self) -> None:
        return None  # nothing to refresh: a refused static token stays refused


class TokenFileCredentials:
    """A bearer token re-read from a file, as kubelet rotates projected service-account tokens.

    The file is re-read once ``reload_after`` seconds have passed (client-go uses one minute)
    and immediately after a 401.
    """

    def __init__(self, path: str | Path, *, reload_after: float = 60.0) -> None:
        self.path = Path(path)
        self.reload_after = reload_after
        self._token: str | None = None
        self._read_at = 0.0

    async def authorization(self) -> str | None:
        if self._token is None or time.monotonic() - self._read_at >= self.reload_after:
            self._token = await asyncio.to_thread(self._read)
            self._read_at = time.monotonic()
        return f"Bearer {self._token}"

    def _read(self) -> str:
        try:
            token = self.path.read_text().strip()
        except OSError as exc:
            raise ConfigError(f"cannot read token file {self.path}: {exc}") from exc
        if not token:
            raise ConfigError(f"token file {self.path} is empty")
        return token

    def invalidate(self) -> None:
        self._token = None


class ExecCredentials:
    """A token from a kubeconfig ``exec`` plugin, re-run when it expires or is refused.

    kubernetes-asyncio's ``ExecProvider`` runs the plugin; this class adds the caching that
    decides when to run it again: ``expirationTimestamp`` minus ``refresh_margin`` seconds, or
    never (until a 401) when the plugin gives no expiry.
    """

    def __init__(self, exec_config: dict[str, Any], *, refresh_margin: float = 30.0) -> None:
        from kubernetes_asyncio.config.config_exception import ConfigException
        from kubernetes_asyncio.config.exec_provider import ExecProvider
        from kubernetes_asyncio.config.kube_config import ConfigNode

        try:
            self._provider = ExecProvider(ConfigNode("exec", exec_config))
        except ConfigException as exc:
            raise ConfigError(f"users[].user.exec: {exc}") from exc
        self.refresh_margin = refresh_margin
        self._token: str | None = None
        self._expires_at: datetime | None = None
        self._lock = asyncio.Lock()

    def _fresh(self) -> bool:
        if self._token is None:
            return False
        if self._expires_at is None:
            return True
        remaining = (self._expires_at - datetime.now(UTC)).total_seconds()
        return remaining > self.refresh_margin

    async def authorization(self) -> str | None:
        if self._fresh():
            return f"Bearer {self._token}"
        async with self._lock:  # concurrent requests share one plugin run
            if not self._fresh():
                await self._run()
        return f"Bearer {self._token}"

    async def _run(self) -> None:
        from kubernetes_asyncio.config.config_exception import ConfigException

        try:
            status = await self._provider.run()
        except ConfigException as exc:
            raise ConfigError(f"exec credential plugin failed: {exc}") from exc
        token = status.get("token") if isinstance(status, dict) else None
        if not token:
            raise ConfigError("exec credential plugin returned no status.token")
        self._token = str(token)
        expiry = status.get("expirationTimestamp")
        self._expires_at = _parse_time(str(expiry)) if expiry else None

    def invalidate(self) -> None:
        self._token = None
        self._expires_at = None


def _parse_time(text: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ConfigError(f"exec plugin: bad status.expirationTimestamp {text!r}") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
