"""Where the apiserver is and how to authenticate: kubeconfig, in-cluster, or a ControlPlane.

kubernetes-asyncio parses kubeconfig files (contexts, embedded or file certificates, tokens,
OIDC and exec plugins) and in-cluster service-account files; this module turns its result into
a small immutable ``ClientConfig`` with an ``ssl.SSLContext`` and a refreshing ``Credentials``.
"""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crdkit.client.auth import (
    Credentials,
    ExecCredentials,
    NoCredentials,
    StaticCredentials,
    TokenFileCredentials,
)
from crdkit.client.errors import ConfigError

if TYPE_CHECKING:
    from crdkit.testing import ControlPlane

__all__ = ["ClientConfig", "Timeouts"]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


@dataclass(frozen=True)
class Timeouts:
    """Per-request limits in seconds. Nothing waits forever on a dead connection.

    ``read`` bounds the gap between two reads of one response (a silent peer), ``total``
    bounds a whole non-streaming request. A watch has no total; ``watch_idle`` bounds its
    silence instead: the apiserver sends a bookmark about every minute to a watch that asks for
    them, so 90 s without a byte means the connection is dead and the watch reconnects.
    """

    connect: float = 10.0
    read: float = 60.0
    total: float | None = 120.0
    watch_idle: float = 90.0

    def __post_init__(self) -> None:
        for name in ("connect", "read", "total", "watch_idle"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"Timeouts.{name} must be positive, got {value!r}")


@dataclass(frozen=True)
class ClientConfig:
    """An apiserver endpoint with TLS settings and credentials."""

    server: str
    ssl_context: ssl.SSLContext | None = None
    credentials: Credentials = field(default_factory=NoCredentials)
    tls_server_name: str | None = None
    proxy: str | None = None
    timeouts: Timeouts = field(default_factory=Timeouts)
    compression: bool = False
    """Ask for gzip-compressed responses. Off by default: an operator usually runs next to
    its apiserver, where bandwidth is plentiful and the apiserver's CPU (which compresses
    every large list and watch for every client) is the resource everyone shares. Turn it
    on for clusters behind slow links."""

    def __post_init__(self) -> None:
        if not self.server.startswith(("https://", "http://")):
            raise ConfigError(f"server must be an http(s) URL, got {self.server!r}")
        object.__setattr__(self, "server", self.server.rstrip("/"))

    # -- constructors ----------------------------------------------------------------------

    @classmethod
    async def from_kubeconfig(
        cls, path: str | Path | None = None, *, context: str | None = None
    ) -> ClientConfig:
        """Load a kubeconfig (``$KUBECONFIG``'s first file or ``~/.kube/config`` by default)."""
        from kubernetes_asyncio.client import Configuration
        from kubernetes_asyncio.config.config_exception import ConfigException
        from kubernetes_asyncio.config.kube_config import load_kube_config

        path = _kubeconfig_path(path)
        configuration: Any = Configuration()
        try:
            loader: Any = await load_kube_config(
                config_file=str(path),
                context=context,
                client_configuration=configuration,
                persist_config=False,
            )
        except (ConfigException, KeyError, AssertionError, TypeError) as exc:
            raise ConfigError(f"cannot load kubeconfig {path}: {exc}") from exc
        user: Any = getattr(loader, "_user", None)
        exec_config = user.value.get("exec") if user is not None else None
        token_file = user.value.get("tokenFile") if user is not None else None
        credentials: Credentials
        header = configuration.api_key.get("BearerToken")
        if exec_config and header:
            credentials = ExecCredentials(dict(exec_config))
        elif token_file and not user.value.get("token"):
            base = path.parent
            credentials = TokenFileCredentials(base / token_file)
        elif header:
            credentials = StaticCredentials(header)
        else:
            credentials = NoCredentials()
        return cls(
            server=configuration.host,
            ssl_context=_ssl_context(
                ca_file=configuration.ssl_ca_cert,
                cert_file=configuration.cert_file,
                key_file=configuration.key_file,
                verify=configuration.verify_ssl,
            )
            if configuration.host.startswith("https://")
            else None,
            credentials=credentials,
            tls_server_name=getattr(configuration, "tls_server_name", None),
            proxy=configuration.proxy,
        )

    @classmethod
    def from_incluster(
        cls,
        *,
        environ: dict[str, str] | None = None,
        service_account_dir: str | Path = SERVICE_ACCOUNT_DIR,
    ) -> ClientConfig:
        """The pod's service account: ``KUBERNETES_SERVICE_HOST/PORT``, token and CA files.

        The token file is re-read every minute: kubelet rotates projected tokens.
        """
        env = os.environ if environ is None else environ
        host = env.get("KUBERNETES_SERVICE_HOST")
        port = env.get("KUBERNETES_SERVICE_PORT")
        if not host or not port:
            raise ConfigError(
                "not running in a cluster: KUBERNETES_SERVICE_HOST and "
                "KUBERNETES_SERVICE_PORT must be set"
            )
        folder = Path(service_account_dir)
        token, ca = folder / "token", folder / "ca.crt"
        for needed in (token, ca):
            if not needed.is_file():
                raise ConfigError(f"in-cluster file {needed} does not exist")
        server_host = f"[{host}]" if ":" in host else host
        return cls(
            server=f"https://{server_host}:{port}",
            ssl_context=_ssl_context(ca_file=str(ca)),
            credentials=TokenFileCredentials(token),
        )

    @classmethod
    def from_control_plane(cls, plane: ControlPlane) -> ClientConfig:
        """The admin user of a local :class:`~crdkit.testing.ControlPlane`."""
        return cls(
            server=plane.server_url,
            ssl_context=_ssl_context(
                ca_file=str(plane.ca_file),
                cert_file=str(plane.client_cert_file),
                key_file=str(plane.client_key_file),
            ),
        )

    @classmethod
    async def load(cls) -> ClientConfig:
        """In-cluster when running in a pod, otherwise the default kubeconfig."""
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            return cls.from_incluster()
        return await cls.from_kubeconfig()


def _kubeconfig_path(path: str | Path | None) -> Path:
    """The kubeconfig to read: the given one, ``$KUBECONFIG``'s first, or ``~/.kube/config``."""
    if path is None:
        env = os.environ.get("KUBECONFIG", "")
        path = env.split(os.pathsep)[0] if env else Path.home() / ".kube" / "config"
    resolved = Path(path).absolute()
    if not resolved.is_file():
        raise ConfigError(f"kubeconfig {resolved} does not exist")
    return resolved


def _ssl_context(
    *,
    ca_file: str | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
    verify: bool = True,
) -> ssl.SSLContext:
    try:
        context = ssl.create_default_context(cafile=ca_file or None)
        if cert_file:
            context.load_cert_chain(cert_file, key_file or None)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"cannot load TLS material: {exc}") from exc
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context
