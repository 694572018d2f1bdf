"""Network faults on demand, between the code under test and the apiserver.

Two proxies, each on a loopback port, each switchable between modes while the test runs:

- :class:`TcpFaultProxy` forwards bytes. TLS stays end to end (the apiserver's certificate is
  valid for 127.0.0.1, so clients need only the new port).
- :class:`HttpFaultProxy` also terminates TLS, with a certificate of its own that the configs
  and kubeconfigs it hands out trust, and sends each request on to the apiserver under the
  identity it was given (for a :class:`ControlPlane`, the admin). It sees requests in clear,
  so it can record them, answer chosen ones itself (a 429 with ``Retry-After``, a 503 storm)
  and cut watches.

Modes (:class:`FaultMode`), for both; each call returns once the mode is in force:

=============================  =============================================================
``pass_through()``             forward everything (the start mode)
``hold(resume=True)``          a blackhole: connections are accepted and kept, no byte moves
                               either way. ``pass_through()`` heals it: with ``resume=True``
                               held connections carry on (a partition that healed), with
                               ``resume=False`` they stay silent for good (a NAT or load
                               balancer that forgot them) while new ones work
``drop()``                     close every connection (FIN), and each new one at once
``refuse()``                   stop listening: new connections are refused
``reset()``                    reset every connection (RST), and each new one at once
``latency(seconds)``           forward everything, each chunk that much later
``freeze_connections()``       the open connections go silent for good (mode unchanged)
``close_connections()``        close (or ``reset=True``: reset) the open connections once
=============================  =============================================================

Each proxy runs its own event loop in a daemon thread, so it works the same from sync and
async tests and whichever loop pytest-asyncio gives them, and keeps forwarding while the test
blocks. Use ``with`` or ``async with`` (or ``start()`` / ``stop()``)::

    async with HttpFaultProxy.for_control_plane(control_plane) as proxy:
        async with Client(proxy.client_config()) as client:
            proxy.fail(429, retry_after=5, watch=True, times=1)
            ...
            proxy.hold()                 # partition
            proxy.pass_through()         # heal
            assert proxy.requests(watch=True)[1].received_at >= ...

A loopback proxy cannot hide TCP acknowledgements (the proxy's kernel sends them), so a held
connection looks to the client like a peer that went silent, not one whose packets vanish:
timeouts in the client notice it, TCP keepalive and user timeouts do not.
"""

from __future__ import annotations

import base64
import dataclasses
import shutil
import ssl
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar
from urllib.parse import urlsplit

import yaml

from crdkit._lifecycle import BlockingStartStop
from crdkit.testing.envtest.certs import generate_pki
from crdkit.testing.faults._loop_thread import LoopThread
from crdkit.testing.faults._proxy_http import HttpLayer, InjectedFault, RecordedRequest, new_fault
from crdkit.testing.faults._proxy_tcp import FaultMode, TcpFaults

if TYPE_CHECKING:
    from collections.abc import Coroutine, Iterable

    from crdkit.client import ClientConfig
    from crdkit.testing.envtest.control_plane import ControlPlane

__all__ = ["FaultMode", "HttpFaultProxy", "InjectedFault", "RecordedRequest", "TcpFaultProxy"]

T = TypeVar("T")
HOST = "127.0.0.1"
NAME = "fault-proxy"  # of the cluster, user and context in the kubeconfigs it writes


class TcpFaultProxy(BlockingStartStop):
    """A TCP proxy on ``127.0.0.1`` in front of ``upstream`` (``(host, port)`` or a URL).

    ``port=0`` picks a free port; the port stays the same across ``refuse()`` and back.
    """

    def __init__(self, upstream: tuple[str, int] | str, *, port: int = 0) -> None:
        self._upstream = _address(upstream)
        self._port = port
        self._plane: ControlPlane | None = None
        self._thread: LoopThread | None = None
        self._faults: TcpFaults | None = None

    @classmethod
    def for_control_plane(cls, plane: ControlPlane) -> Self:
        """A proxy in front of ``plane``'s apiserver; ``client_config()`` and
        ``write_kubeconfig()`` then need no arguments."""
        proxy = cls(plane.server_url)
        proxy._plane = plane
        return proxy

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("the proxy is already started")
        self._thread = LoopThread(f"crdkit-fault-proxy-{self._upstream[1]}")
        try:
            self._thread.run(self._start())
        except BaseException:
            self.stop()
            raise

    async def _start(self) -> None:
        self._faults = TcpFaults(self._upstream, HOST, self._port)
        await self._faults.start()
        self._port = self._faults.port

    def stop(self) -> None:
        """Close every connection and the listening socket; safe to call twice."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        try:
            thread.run(self._stop())
        finally:
            thread.stop()

    async def _stop(self) -> None:
        if self._faults is not None:
            await self._faults.stop()

    # -- where -----------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return HOST

    @property
    def port(self) -> int:
        self._core()
        return self._port

    @property
    def url(self) -> str:
        """``https://127.0.0.1:PORT``: the apiserver's URL, through the proxy."""
        return f"https://{HOST}:{self.port}"

    def client_config(self, base: ClientConfig | None = None) -> ClientConfig:
        """``base`` (default: the control plane's admin config) pointed at the proxy."""
        from crdkit.client import ClientConfig

        if base is None:
            base = ClientConfig.from_control_plane(self._require_plane())
        return dataclasses.replace(base, server=self.url)

    def write_kubeconfig(self, path: str | Path) -> Path:
        """A copy of the control plane's kubeconfig whose server is the proxy."""
        config = yaml.safe_load(self._require_plane().kubeconfig_path.read_text())
        for cluster in config.get("clusters") or []:
            cluster["cluster"]["server"] = self.url
        return _write_private(Path(path), config)

    def _require_plane(self) -> ControlPlane:
        if self._plane is None:
            raise RuntimeError("not made with for_control_plane(): pass the base config")
        return self._plane

    # -- modes -----------------------------------------------------------------------------

    @property
    def mode(self) -> FaultMode:
        return self._core().mode

    @property
    def open_connections(self) -> int:
        """Connections accepted and not yet closed."""
        return len(self._core().links)

    @property
    def accepted(self) -> int:
        """Connections accepted since the start (refused ones are not)."""
        return self._core().accepted

    def pass_through(self) -> None:
        """Forward everything; held connections resume unless they were frozen."""
        self._set(FaultMode.PASS)

    def hold(self, *, resume: bool = True) -> None:
        """Blackhole: keep connections open and forward nothing, in either direction.

        ``resume`` says what the connections held now (and those accepted during the hold) do
        once the hold ends: carry on with whatever was sent meanwhile (a healed partition),
        or stay silent for good (the path forgot them; only new connections work).
        """
        self._set(FaultMode.HOLD, resume=resume)

    def drop(self) -> None:
        """Close every connection, and each new one as soon as it is accepted."""
        self._set(FaultMode.DROP)

    def refuse(self) -> None:
        """Stop listening: new connections are refused (ECONNREFUSED)."""
        self._set(FaultMode.REFUSE)

    def reset(self) -> None:
        """Reset every connection (RST), and each new one as soon as it is accepted."""
        self._set(FaultMode.RESET)

    def latency(self, seconds: float) -> None:
        """Forward everything, each chunk ``seconds`` after it arrived (order kept)."""
        if seconds < 0:
            raise ValueError(f"latency must not be negative, got {seconds}")
        self._set(FaultMode.LATENCY, latency=seconds)

    def freeze_connections(self) -> int:
        """The connections open now go silent for good; new ones are not affected.

        What an expired NAT or load-balancer entry does. Returns how many were frozen.
        """
        return self._call(self._freeze())

    def close_connections(self, *, reset: bool = False) -> int:
        """Close (FIN) or reset (RST) the connections open now; returns how many."""
        return self._call(self._close_all(reset))

    async def _freeze(self) -> int:
        return self._core().freeze()

    async def _close_all(self, reset: bool) -> int:
        return self._core().close_all(reset=reset)

    def _set(self, mode: FaultMode, *, latency: float = 0.0, resume: bool = True) -> None:
        self._call(self._core().set_mode(mode, latency=latency, resume=resume))

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        if self._thread is None:
            coroutine.close()
            raise RuntimeError("the proxy is not started")
        return self._thread.run(coroutine)

    def _core(self) -> TcpFaults:
        if self._faults is None or self._thread is None:
            raise RuntimeError("the proxy is not started")
        return self._faults


class HttpFaultProxy(TcpFaultProxy):
    """A TLS-terminating HTTP proxy in front of ``upstream_url``, with the TCP proxy's modes.

    ``upstream_ssl`` is how the proxy connects on: it trusts the apiserver and presents the
    identity requests run as (an ``Authorization`` header from the client is passed on too).
    Clients trust the proxy's own CA, ``ca_file``; :meth:`client_config` and
    :meth:`write_kubeconfig` do that for you.
    """

    def __init__(
        self,
        upstream_url: str,
        *,
        upstream_ssl: ssl.SSLContext | None = None,
        port: int = 0,
    ) -> None:
        super().__init__(upstream_url, port=port)
        self._upstream_url = upstream_url
        self._upstream_ssl = upstream_ssl
        self._http: HttpLayer | None = None
        self._workdir: Path | None = None
        self._ca_file: Path | None = None

    @classmethod
    def for_control_plane(cls, plane: ControlPlane) -> Self:
        """A proxy in front of ``plane``'s apiserver, sending requests on as its admin."""
        from crdkit.testing.envtest._http import client_tls

        upstream_ssl = client_tls(
            str(plane.ca_file), str(plane.client_cert_file), str(plane.client_key_file)
        )
        proxy = cls(plane.server_url, upstream_ssl=upstream_ssl)
        proxy._plane = plane
        return proxy

    async def _start(self) -> None:
        self._workdir = Path(tempfile.mkdtemp(prefix="crdkit-fault-proxy-"))
        pki = generate_pki(self._workdir / "pki")
        self._ca_file = pki.ca_cert
        server_ssl = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server_ssl.load_cert_chain(str(pki.serving_cert), str(pki.serving_key))
        self._http = HttpLayer(self._upstream_url, self._upstream_ssl, server_ssl)
        await self._http.start()
        # The byte layer sits in front of the TLS server: connection faults hit TLS records.
        self._faults = TcpFaults((HOST, self._http.port), HOST, self._port)
        await self._faults.start()
        self._port = self._faults.port

    async def _stop(self) -> None:
        try:
            await super()._stop()
            if self._http is not None:
                await self._http.stop()
        finally:
            if self._workdir is not None:
                shutil.rmtree(self._workdir, ignore_errors=True)

    # -- where -----------------------------------------------------------------------------

    @property
    def ca_file(self) -> Path:
        """The PEM file of the CA that signed the proxy's serving certificate."""
        self._core()
        assert self._ca_file is not None
        return self._ca_file

    def client_config(self, base: ClientConfig | None = None) -> ClientConfig:
        """A config for the proxy: its URL and CA; credentials from ``base`` if given.

        The proxy asks no client certificate (it sends requests on under its own identity),
        so only bearer-token credentials of ``base`` matter.
        """
        from crdkit.client import ClientConfig

        context = ssl.create_default_context(cafile=str(self.ca_file))
        if base is None:
            return ClientConfig(server=self.url, ssl_context=context)
        return dataclasses.replace(base, server=self.url, ssl_context=context)

    def write_kubeconfig(self, path: str | Path) -> Path:
        """A kubeconfig for the proxy (its URL and CA, no credentials of its own)."""
        ca = self.ca_file.read_text()
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": NAME,
                    "cluster": {
                        "server": self.url,
                        "certificate-authority-data": base64.b64encode(ca.encode()).decode(),
                    },
                }
            ],
            "users": [{"name": "fault-proxy", "user": {}}],
            "contexts": [
                {
                    "name": "fault-proxy",
                    "context": {"cluster": "fault-proxy", "user": "fault-proxy"},
                }
            ],
            "current-context": "fault-proxy",
        }
        return _write_private(Path(path), config)

    # -- HTTP faults -----------------------------------------------------------------------

    def fail(
        self,
        status: int = 503,
        *,
        retry_after: float | None = None,
        methods: Iterable[str] | None = None,
        watch: bool | None = None,
        path: str | None = None,
        times: int | None = None,
        probability: float = 1.0,
        seed: int | None = None,
    ) -> InjectedFault:
        """Answer matching requests with ``status`` (a ``metav1.Status`` body, and a
        ``Retry-After`` header when ``retry_after`` is given) instead of the apiserver.

        A request matches when its method is in ``methods``, it is (``watch=True``) or is not
        (``False``) a watch, and its path matches the regular expression ``path``; ``None``
        matches anything. The rule answers ``times`` requests (``None``: until removed), each
        matching one with ``probability`` (seeded by ``seed`` for a repeatable storm). Rules
        are tried in the order they were added.
        """
        fault = new_fault(
            status=status,
            retry_after=retry_after,
            reset=False,
            methods=methods,
            watch=watch,
            path=path,
            times=times,
            probability=probability,
            seed=seed,
        )
        return self._call(self._add_fault(fault))

    def reset_requests(
        self,
        *,
        methods: Iterable[str] | None = None,
        watch: bool | None = None,
        path: str | None = None,
        times: int | None = None,
        probability: float = 1.0,
        seed: int | None = None,
    ) -> InjectedFault:
        """Reset the connection (RST) of matching requests once they have arrived: the
        client cannot tell whether the server acted on them. Matching as for :meth:`fail`."""
        fault = new_fault(
            status=None,
            retry_after=None,
            reset=True,
            methods=methods,
            watch=watch,
            path=path,
            times=times,
            probability=probability,
            seed=seed,
        )
        return self._call(self._add_fault(fault))

    def remove_fault(self, fault: InjectedFault) -> None:
        self._call(self._remove_fault(fault))

    def clear_faults(self) -> None:
        """Remove every rule: from now on the apiserver answers everything."""
        self._call(self._clear_faults())

    def cut_watches(self) -> int:
        """Break every watch in flight now; returns how many. New watches are not affected."""
        return self._call(self._cut_watches())

    @property
    def open_watches(self) -> int:
        return len(self._layer().watches)

    def requests(self, *, watch: bool | None = None) -> list[RecordedRequest]:
        """Every request received so far (optionally only watches or only non-watches)."""
        return self._call(self._requests(watch))

    def clear_requests(self) -> None:
        self._call(self._clear_requests())

    async def _add_fault(self, fault: InjectedFault) -> InjectedFault:
        self._layer().faults.append(fault)
        return fault

    async def _remove_fault(self, fault: InjectedFault) -> None:
        fault.deactivate()
        layer = self._layer()
        layer.faults = [f for f in layer.faults if f is not fault]

    async def _clear_faults(self) -> None:
        layer = self._layer()
        for fault in layer.faults:
            fault.deactivate()
        layer.faults = []

    async def _cut_watches(self) -> int:
        return self._layer().cut_watches()

    async def _requests(self, watch: bool | None) -> list[RecordedRequest]:
        return [e.snapshot() for e in self._layer().exchanges if watch is None or e.watch == watch]

    async def _clear_requests(self) -> None:
        self._layer().exchanges.clear()

    def _layer(self) -> HttpLayer:
        self._core()
        assert self._http is not None
        return self._http


def _address(upstream: tuple[str, int] | str) -> tuple[str, int]:
    if isinstance(upstream, tuple):
        return upstream
    parts = urlsplit(upstream)
    if parts.hostname is None:
        raise ValueError(f"upstream must be (host, port) or a URL, got {upstream!r}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname, port


def _write_private(path: Path, config: dict[str, Any]) -> Path:
    path.touch(mode=0o600)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path
