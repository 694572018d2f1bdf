"""Where the apiserver is and how to authenticate: kubeconfig, in-cluster, or a ControlPlane.

Kubeconfig files are read by :mod:`crdkit.client.kubeconfig` (kubectl's merge rules, no
kubernetes-asyncio); this module turns the chosen context into a small immutable
``ClientConfig`` with an ``ssl.SSLContext`` and a refreshing ``Credentials``. Only an
``auth-provider`` user imports kubernetes-asyncio, when its token is first needed.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from crdkit.client.auth import (
    AuthProviderCredentials,
    Credentials,
    ExecCredentials,
    NoCredentials,
    StaticCredentials,
    TokenFileCredentials,
)
from crdkit.client.errors import ConfigError
from crdkit.client.exec_plugin import DEFAULT_EXEC_TIMEOUT

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crdkit.client.kubeconfig import Kubeconfig, KubeconfigCluster, KubeconfigUser

__all__ = ["AdminEndpoint", "ClientConfig", "Timeouts"]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


class AdminEndpoint(Protocol):
    """What a local control plane (``crdkit.testing.ControlPlane``) gives a client: where the
    apiserver listens, its CA and the admin user's certificate. A protocol, so that the client
    needs nothing from the test kit that sits above it."""

    @property
    def server_url(self) -> str: ...
    @property
    def ca_file(self) -> Path: ...
    @property
    def client_cert_file(self) -> Path: ...
    @property
    def client_key_file(self) -> Path: ...


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
        cls,
        path: str | Path | Sequence[str | Path] | None = None,
        *,
        context: str | None = None,
        exec_timeout: float = DEFAULT_EXEC_TIMEOUT,
    ) -> ClientConfig:
        """Load a kubeconfig: the given file(s), else ``$KUBECONFIG`` (its files merged as
        kubectl merges them), else ``~/.kube/config``; ``context`` overrides the current one.

        Every problem is a one-line :class:`ConfigError` naming the file, the entry and the
        key. ``exec_timeout`` bounds each run of an exec credential plugin (and each token
        fetch of an auth provider). Exec plugins run when a request first needs a token.
        """
        from crdkit.client.kubeconfig import kubeconfig_paths, read_kubeconfig

        kubeconfig = read_kubeconfig(kubeconfig_paths(path), context=context)
        cluster, user = kubeconfig.cluster, kubeconfig.user
        https = cluster.server.startswith("https://")
        return cls(
            server=cluster.server,
            ssl_context=_kubeconfig_ssl_context(cluster, user) if https else None,
            credentials=_kubeconfig_credentials(kubeconfig, exec_timeout),
            tls_server_name=cluster.tls_server_name,
            proxy=cluster.proxy_url,
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
    def from_control_plane(cls, plane: AdminEndpoint) -> ClientConfig:
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
    async def load(
        cls, *, context: str | None = None, exec_timeout: float = DEFAULT_EXEC_TIMEOUT
    ) -> ClientConfig:
        """In-cluster when running in a pod (and no context is asked for), otherwise the
        default kubeconfig."""
        if context is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
            return cls.from_incluster()
        return await cls.from_kubeconfig(context=context, exec_timeout=exec_timeout)


def _kubeconfig_credentials(kubeconfig: Kubeconfig, exec_timeout: float) -> Credentials:
    # client-go's order: a static token first (it wins over a plugin), then the token file,
    # basic auth, an exec plugin, an auth provider.
    user = kubeconfig.user
    if user.token is not None:
        return StaticCredentials(f"Bearer {user.token}")
    if user.token_file is not None:
        return TokenFileCredentials(user.token_file)
    if user.username is not None:
        pair = f"{user.username}:{user.password or ''}".encode()
        return StaticCredentials(f"Basic {base64.b64encode(pair).decode()}")
    if user.exec is not None:
        return ExecCredentials(
            user.exec,
            timeout=exec_timeout,
            where=user.where,
            folder=user.folder,
            cluster=_exec_cluster_info(kubeconfig.cluster),
        )
    if user.auth_provider is not None:
        return AuthProviderCredentials(user.auth_provider, where=user.where, timeout=exec_timeout)
    return NoCredentials()


def _exec_cluster_info(cluster: KubeconfigCluster) -> dict[str, Any]:
    """The ``spec.cluster`` client-go gives a plugin that sets ``provideClusterInfo``."""
    info: dict[str, Any] = {"server": cluster.server}
    if cluster.tls_server_name:
        info["tls-server-name"] = cluster.tls_server_name
    if cluster.insecure_skip_tls_verify:
        info["insecure-skip-tls-verify"] = True
    if cluster.certificate_authority is not None:
        ca = cluster.certificate_authority
        info["certificate-authority-data"] = base64.b64encode(ca).decode()
    if cluster.proxy_url:
        info["proxy-url"] = cluster.proxy_url
    if cluster.exec_extension is not None:
        info["config"] = cluster.exec_extension
    return info


def _kubeconfig_ssl_context(cluster: KubeconfigCluster, user: KubeconfigUser) -> ssl.SSLContext:
    # As client-go: a cluster's CA is the only one trusted; without one, the system's are.
    # (Loading the system's store also costs tens of milliseconds, skipped when not needed.)
    if cluster.insecure_skip_tls_verify:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif cluster.certificate_authority is None:
        context = ssl.create_default_context()
    else:
        try:
            context = ssl.create_default_context(cadata=_cadata(cluster.certificate_authority))
        except (ssl.SSLError, ValueError) as exc:
            raise ConfigError(
                f"{cluster.where}: {cluster.certificate_authority_key}: not a PEM or DER "
                f"certificate ({_ssl_reason(exc)})"
            ) from None
    if user.client_certificate is not None and user.client_key is not None:
        _load_client_pair(context, user.client_certificate, user.client_key, user.where)
    return context


def _cadata(data: bytes) -> str | bytes:
    # `cadata` takes PEM as text and DER as bytes.
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return data
    return text if "-----BEGIN" in text else data


def _load_client_pair(context: ssl.SSLContext, certificate: bytes, key: bytes, where: str) -> None:
    """Load a client certificate and key given as bytes.

    `load_cert_chain` reads only files: both go to a private temporary folder that is
    removed before this returns, so the key does not stay on disk.
    """
    with tempfile.TemporaryDirectory(prefix="crdkit-tls-") as folder:
        cert_file, key_file = Path(folder) / "client.crt", Path(folder) / "client.key"
        for path, data in ((cert_file, certificate), (key_file, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as file:
                file.write(data)
        try:
            context.load_cert_chain(cert_file, key_file)
        except ssl.SSLError as exc:
            raise ConfigError(
                f"{where}: {_which_is_bad(certificate)}: cannot be used ({_ssl_reason(exc)})"
            ) from None


def _which_is_bad(certificate: bytes) -> str:
    # OpenSSL's error does not say which half failed: try the certificate alone.
    probe = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        probe.load_verify_locations(cadata=_cadata(certificate))
    except (ssl.SSLError, ValueError):
        return "client-certificate(-data)"
    return "client-key(-data) (or it does not match client-certificate)"


def _ssl_reason(exc: Exception) -> str:
    reason = getattr(exc, "reason", None)
    return str(reason) if reason else " ".join(str(exc).split())


def _ssl_context(
    *,
    ca_file: str | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
) -> ssl.SSLContext:
    try:
        context = ssl.create_default_context(cafile=ca_file or None)
        if cert_file:
            context.load_cert_chain(cert_file, key_file or None)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"cannot load TLS material: {exc}") from exc
    return context
