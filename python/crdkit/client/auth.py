"""Credentials that put an ``Authorization`` header on requests and refresh themselves.

Short-lived credentials are the norm on real clusters: projected service-account tokens rotate
hourly, exec plugins (``aws eks get-token``, ``gke-gcloud-auth-plugin``) hand out tokens that
expire in minutes. A long-running operator that read its token once stops working after that,
so each source here knows when to fetch again, and the transport calls ``invalidate()`` on a
401 to force one refresh before giving up.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from crdkit.client.errors import ConfigError
from crdkit.client.exec_plugin import DEFAULT_EXEC_TIMEOUT, ExecCredentials

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "AuthProviderCredentials",
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


class AuthProviderCredentials:
    """A token from a kubeconfig ``auth-provider`` (``oidc``, ``gcp``), via kubernetes-asyncio.

    Auth providers are deprecated in kubectl in favour of exec plugins; kubernetes-asyncio
    still implements them, so it does the work here and is imported only on first use. The
    token is asked for again every ``reload_after`` seconds (the provider refreshes an expired
    one then) and after a 401; each attempt is limited to ``timeout`` seconds.
    """

    def __init__(
        self,
        provider: Mapping[str, Any],
        *,
        where: str = "users[].user",
        timeout: float = DEFAULT_EXEC_TIMEOUT,
        reload_after: float = 60.0,
    ) -> None:
        self.name = str(provider.get("name"))
        # A private deep copy: the provider writes refreshed tokens back into it.
        self._provider: dict[str, Any] = json.loads(json.dumps(provider, default=str))
        self._where = where
        self.timeout = timeout
        self.reload_after = reload_after
        self._header: str | None = None
        self._read_at = 0.0
        self._lock = asyncio.Lock()

    async def authorization(self) -> str | None:
        async with self._lock:
            if self._header is None or time.monotonic() - self._read_at >= self.reload_after:
                self._header = await self._load()
                self._read_at = time.monotonic()
        return self._header

    async def _load(self) -> str:
        try:
            from kubernetes_asyncio.client import Configuration
            from kubernetes_asyncio.config.kube_config import KubeConfigLoader
        except ImportError:
            raise ConfigError(
                f"{self._where}: auth-provider {self.name!r} needs kubernetes-asyncio: "
                "pip install 'crdkit[auth-provider]' (or use an exec plugin)"
            ) from None

        # The smallest kubeconfig that holds the provider; the server is never contacted.
        config = {
            "current-context": "crdkit",
            "contexts": [{"name": "crdkit", "context": {"cluster": "crdkit", "user": "crdkit"}}],
            "clusters": [{"name": "crdkit", "cluster": {"server": "https://127.0.0.1"}}],
            "users": [{"name": "crdkit", "user": {"auth-provider": self._provider}}],
        }
        configuration: Any = Configuration()
        where = f"{self._where}: auth-provider {self.name!r}"
        try:
            loader: Any = KubeConfigLoader(config_dict=config)
            await asyncio.wait_for(loader.load_and_set(configuration), self.timeout)
        except TimeoutError:
            raise ConfigError(f"{where}: no token after {self.timeout:g} s") from None
        except Exception as exc:  # third-party code: any failure is the provider's config
            raise ConfigError(f"{where}: {type(exc).__name__}: {exc}") from None
        header = configuration.api_key.get("BearerToken") if configuration.api_key else None
        if not header:
            raise ConfigError(f"{where}: not supported, or it gave no token")
        return str(header)

    def invalidate(self) -> None:
        self._header = None
