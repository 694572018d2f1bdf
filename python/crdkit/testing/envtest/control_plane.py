"""A real kube-apiserver and etcd on loopback, for tests and demos.

``ControlPlane`` owns a temporary folder (certificates, kubeconfig, etcd data, logs) and two
child processes. It holds nothing bound to an event loop between calls, so a pytest session
fixture may start it in one loop while tests use it from theirs. A supervisor process, started
with the folder, kills both programs and deletes the folder if Python dies without stopping
them, SIGKILL included (see :mod:`crdkit.testing.envtest.supervisor`).
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from crdkit._lifecycle import StartStop
from crdkit.testing.envtest import _http
from crdkit.testing.envtest.binaries import Binaries, find_binaries
from crdkit.testing.envtest.certs import Pki, generate_pki
from crdkit.testing.envtest.crds import CrdSource, crd_is_established, load_crds, served_versions
from crdkit.testing.envtest.gates import WORKLOAD_API, ApiserverGates
from crdkit.testing.envtest.kubeconfig import write_kubeconfig
from crdkit.testing.envtest.processes import ManagedProcess, free_ports, stop_all
from crdkit.testing.envtest.supervisor import Supervisor
from crdkit.testing.errors import ControlPlaneError

__all__ = ["ControlPlane"]

T = TypeVar("T")
Check = Callable[[], Awaitable[tuple[bool, str]]]

HOST = "127.0.0.1"
POLL = 0.1
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
FIELD_MANAGER = "crdkit-envtest"
PORT_ATTEMPTS = 3


# Folders of control planes never stopped, removed at interpreter exit.
_workdirs: set[Path] = set()


# A fork's exit must not delete the parent's folders.
os.register_at_fork(after_in_child=_workdirs.clear)


@atexit.register
def _clean_up_at_exit() -> None:
    # Programs first: etcd must not be writing into a folder being deleted.
    stop_all()
    for workdir in list(_workdirs):
        shutil.rmtree(workdir, ignore_errors=True)


class _PortTakenError(ControlPlaneError):
    """A program could not bind its port: it was free when chosen, but not any more."""


class ControlPlane(StartStop):
    """etcd and kube-apiserver as local processes, stopped however the caller exits.

    Use ``async with ControlPlane() as cp:`` or ``await cp.start()`` / ``await cp.stop()``.
    Nothing runs a scheduler, kubelet or controller-manager: objects stay as the API stores
    them (pods are not run, namespaces are not finalized, owner references are not collected).

    ``feature_gates``, ``runtime_config`` and ``disabled_admission_plugins`` turn on what
    kube-apiserver leaves off (`crdkit.testing.envtest.gates.ApiserverGates`);
    ``workload_api=True`` adds the set that serves Kubernetes' gang API
    (``scheduling.k8s.io/v1beta1`` PodGroup and Workload, `gates.WORKLOAD_API`).
    """

    def __init__(
        self,
        *,
        binaries: Binaries | None = None,
        start_timeout: float = 60.0,
        stop_grace: float = 10.0,
        etcd_args: Sequence[str] = (),
        apiserver_args: Sequence[str] = (),
        workdir_parent: Path | None = None,
        feature_gates: Mapping[str, bool] | None = None,
        runtime_config: Mapping[str, str] | None = None,
        disabled_admission_plugins: Sequence[str] = (),
        workload_api: bool = False,
    ) -> None:
        gates = ApiserverGates(
            dict(feature_gates or {}), dict(runtime_config or {}), tuple(disabled_admission_plugins)
        )
        self.gates = WORKLOAD_API.merged(gates) if workload_api else gates
        """What kube-apiserver is started with beyond its defaults."""
        self._binaries = binaries
        self.start_timeout = start_timeout
        self.stop_grace = stop_grace
        self._extra_etcd_args = list(etcd_args)
        self._extra_apiserver_args = list(apiserver_args)
        self._workdir_parent = workdir_parent
        self._workdir: Path | None = None
        self._pki: Pki | None = None
        self._kubeconfig: Path | None = None
        self._etcd_port = 0
        self._peer_port = 0
        self._apiserver_port = 0
        self._etcd: ManagedProcess | None = None
        self._apiserver: ManagedProcess | None = None
        self._supervisor: Supervisor | None = None
        self._lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Start etcd, then kube-apiserver, and return once ``/readyz`` answers ok.

        On any failure, cancellation included, whatever was started is stopped again.
        """
        if self._workdir is not None:
            raise ControlPlaneError("this control plane is already started")
        deadline = time.monotonic() + self.start_timeout
        try:
            binaries = self._binaries or find_binaries()
            self._binaries = binaries
            self._workdir = Path(
                tempfile.mkdtemp(prefix="crdkit-envtest-", dir=self._workdir_parent)
            )
            _workdirs.add(self._workdir)
            # At once, before anything else goes into the folder; it needs no waiting for.
            self._supervisor = Supervisor(self._workdir)
            self._pki = await asyncio.to_thread(generate_pki, self._workdir / "pki")
            for attempt in range(1, PORT_ATTEMPTS + 1):
                try:
                    await self._start_on_free_ports(binaries, deadline)
                    return
                except _PortTakenError:
                    # Another program took a port between choosing and binding it; this
                    # happens when several test runs share a machine. Choose again.
                    await asyncio.to_thread(self._stop_processes)
                    if attempt == PORT_ATTEMPTS:
                        raise
        except BaseException:
            # Blocking on purpose: a cancelled task may not get another chance to await.
            self._stop_sync()
            raise

    async def _start_on_free_ports(self, binaries: Binaries, deadline: float) -> None:
        self._etcd_port, self._peer_port, self._apiserver_port = free_ports(3, HOST)
        self._kubeconfig = write_kubeconfig(
            self.workdir / "kubeconfig", self.server_url, self._require(self._pki, "pki")
        )
        shutil.rmtree(self.workdir / "etcd", ignore_errors=True)
        self._etcd = self._spawn("etcd", [str(binaries.etcd), *self._etcd_argv()])
        await self._wait(self._etcd, self._etcd_healthy, deadline)
        await self._start_apiserver(deadline)

    async def stop(self) -> None:
        """Stop both processes (SIGTERM, SIGKILL after the grace period) and delete files.

        Safe to call twice, or on a control plane that never started.
        """
        await asyncio.shield(asyncio.to_thread(self._stop_sync))

    def _stop_processes(self) -> None:
        with self._lock:
            for process in (self._apiserver, self._etcd):
                if process is not None:
                    process.stop(self.stop_grace)
            self._apiserver = self._etcd = None

    def _stop_sync(self) -> None:
        self._stop_processes()
        with self._lock:
            if self._workdir is not None:
                shutil.rmtree(self._workdir, ignore_errors=True)
                _workdirs.discard(self._workdir)
            if self._supervisor is not None:
                self._supervisor.close()
            self._workdir = self._pki = self._kubeconfig = self._supervisor = None

    async def restart_apiserver(self) -> None:
        """Stop kube-apiserver and start it again on the same port; etcd keeps every object.

        Watches break and clients reconnect, as after an apiserver rollout.
        """
        apiserver = self._require(self._apiserver, "kube-apiserver")
        await asyncio.to_thread(apiserver.stop, self.stop_grace)
        self._apiserver = None
        await self._start_apiserver(time.monotonic() + self.start_timeout)

    async def compact_etcd(self, *, restart_apiserver: bool = True) -> int:
        """Compact etcd up to its current revision and return that revision.

        Afterwards lists and watches from an older resourceVersion answer 410 Gone. The
        compaction is recorded the way kube-apiserver's own compactor records it (the
        ``compact_rev_key`` key), so the apiserver learns of it. Its watch cache, though, keeps
        recent events in memory and would go on serving watches from them; restarting the
        apiserver (the default) drops that memory, as a restart during a long outage would.
        With ``restart_apiserver=False`` only requests that reach etcd are refused at once.
        """
        self._require(self._etcd, "etcd")
        # The v3 JSON gateway: a range read returns the store's revision in its header.
        head = await self._etcd_call("range", {"key": _b64("compact_rev_key"), "limit": 1})
        revision = int(head["header"]["revision"])
        put = {"key": _b64("compact_rev_key"), "value": _b64(str(revision))}
        await self._etcd_call("txn", {"success": [{"requestPut": put}]})
        await self._etcd_call("compaction", {"revision": str(revision), "physical": True})
        if restart_apiserver:
            await self.restart_apiserver()
        return revision

    async def _etcd_call(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        response = await asyncio.to_thread(
            _http.request, "POST", f"{self.etcd_url}/v3/kv/{method}", body=body, timeout=30.0
        )
        if response.status != 200 or not isinstance(response.body, dict):
            raise ControlPlaneError(f"etcd {method} failed ({response.status}): {response.text}")
        return response.body

    # -- CRDs ------------------------------------------------------------------------------

    async def install_crds(
        self, crds: Iterable[CrdSource], *, wait: float = 30.0
    ) -> list[dict[str, Any]]:
        """Create or update CRDs (files, folders, dicts or pydantic models) and wait until served.

        Served means, for every served version and within ``wait`` seconds: Established,
        listed in discovery, and a list request answered (the storage behind a new CRD answers
        429 for a moment after it is Established). Returns the CRDs as the apiserver stored them.
        """
        objects = load_crds(crds)
        for crd in objects:
            name = crd["metadata"]["name"]
            # Server-side apply: one call creates or updates, and a re-install is a no-op.
            response = await self._api(
                "PATCH",
                f"{CRD_PATH}/{name}?fieldManager={FIELD_MANAGER}&force=true",
                body=crd,
                content_type="application/apply-patch+yaml",
            )
            if response.status not in (200, 201):
                raise ControlPlaneError(f"installing CRD {name} failed: {response.text}")
        deadline = time.monotonic() + wait
        return [await self._wait_served(crd["metadata"]["name"], deadline) for crd in objects]

    async def _wait_served(self, name: str, deadline: float) -> dict[str, Any]:
        while True:
            response = await self._api("GET", f"{CRD_PATH}/{name}")
            if (
                response.status == 200
                and crd_is_established(response.body)
                and all([await self._serving(*v) for v in served_versions(response.body)])
            ):
                stored: dict[str, Any] = response.body
                return stored
            if time.monotonic() > deadline:
                raise ControlPlaneError(f"CRD {name} was not served in time: {response.text}")
            await asyncio.sleep(POLL)

    async def _serving(self, group: str, version: str, plural: str) -> bool:
        discovery = await self._api("GET", f"/apis/{group}/{version}")
        if discovery.status != 200 or not any(
            r.get("name") == plural for r in (discovery.body or {}).get("resources") or []
        ):
            return False
        listed = await self._api("GET", f"/apis/{group}/{version}/{plural}?limit=1")
        return listed.status == 200

    # -- namespaces ------------------------------------------------------------------------

    async def create_namespace(self, name: str) -> dict[str, Any]:
        """Create a namespace and return it as stored."""
        response = await self._api(
            "POST",
            "/api/v1/namespaces",
            body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        )
        if response.status != 201:
            raise ControlPlaneError(f"creating namespace {name} failed: {response.text}")
        created: dict[str, Any] = response.body
        return created

    async def delete_namespace(self, name: str) -> None:
        """Ask for a namespace's deletion; a namespace already gone is fine.

        With no controller-manager the namespace stays ``Terminating`` with its objects.
        """
        response = await self._api("DELETE", f"/api/v1/namespaces/{name}")
        if response.status not in (200, 202, 404, 409):
            raise ControlPlaneError(f"deleting namespace {name} failed: {response.text}")

    # -- where things are ------------------------------------------------------------------

    @property
    def started(self) -> bool:
        return self._apiserver is not None

    @property
    def binaries(self) -> Binaries:
        return self._require(self._binaries, "binaries")

    @property
    def workdir(self) -> Path:
        """The temporary folder holding certificates, kubeconfig, etcd data and logs."""
        return self._require(self._workdir, "workdir")

    @property
    def kubeconfig_path(self) -> Path:
        """A kubeconfig (certificates embedded) for the admin user in ``system:masters``."""
        return self._require(self._kubeconfig, "kubeconfig")

    @property
    def server_url(self) -> str:
        """The apiserver's ``https://127.0.0.1:PORT``."""
        self._require(self._workdir, "server_url")
        return f"https://{HOST}:{self._apiserver_port}"

    @property
    def etcd_url(self) -> str:
        """etcd's client URL (plain http on loopback)."""
        self._require(self._workdir, "etcd_url")
        return f"http://{HOST}:{self._etcd_port}"

    @property
    def ca_file(self) -> Path:
        return self._require(self._pki, "ca_file").ca_cert

    @property
    def client_cert_file(self) -> Path:
        return self._require(self._pki, "client_cert_file").client_cert

    @property
    def client_key_file(self) -> Path:
        return self._require(self._pki, "client_key_file").client_key

    @property
    def pids(self) -> dict[str, int]:
        """Pids of the running programs; each is also the id of its own process group."""
        return {p.name: p.pid for p in (self._etcd, self._apiserver) if p is not None}

    def log_path(self, name: str) -> Path:
        """The output of ``etcd`` or ``kube-apiserver`` (deleted by ``stop()``)."""
        return self.workdir / f"{name}.log"

    # -- internals -------------------------------------------------------------------------

    @staticmethod
    def _require(value: T | None, what: str) -> T:
        if value is None:
            raise ControlPlaneError(f"{what}: the control plane is not running")
        return value

    def _spawn(self, name: str, argv: list[str]) -> ManagedProcess:
        return ManagedProcess(
            name, argv, self.log_path(name), env=os.environ, supervisor=self._supervisor
        )

    def _etcd_argv(self) -> list[str]:
        client = f"http://{HOST}:{self._etcd_port}"
        peer = f"http://{HOST}:{self._peer_port}"
        return [
            "--name=envtest",
            f"--data-dir={self.workdir / 'etcd'}",
            f"--listen-client-urls={client}",
            f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=envtest={peer}",
            # Data lives as long as the test run; durability only costs time.
            "--unsafe-no-fsync=true",
            "--log-level=warn",
            *self._extra_etcd_args,
        ]

    def _apiserver_argv(self) -> list[str]:
        pki = self._require(self._pki, "pki")
        return [
            f"--etcd-servers={self.etcd_url}",
            f"--bind-address={HOST}",
            f"--advertise-address={HOST}",
            f"--secure-port={self._apiserver_port}",
            f"--cert-dir={self.workdir / 'apiserver-certs'}",
            f"--tls-cert-file={pki.serving_cert}",
            f"--tls-private-key-file={pki.serving_key}",
            f"--client-ca-file={pki.ca_cert}",
            f"--service-account-key-file={pki.service_account_pub}",
            f"--service-account-signing-key-file={pki.service_account_key}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--allow-privileged=true",
            "--authorization-mode=RBAC",
            *self.gates.argv(),  # --disable-admission-plugins=ServiceAccount, at least
            # Endpoints may not hold a loopback address; the reconciler would only log errors.
            "--endpoint-reconciler-type=none",
            *self._extra_apiserver_args,
        ]

    async def _start_apiserver(self, deadline: float) -> None:
        binaries = self.binaries
        self._apiserver = self._spawn(
            "kube-apiserver", [str(binaries.kube_apiserver), *self._apiserver_argv()]
        )
        await self._wait(self._apiserver, self._apiserver_ready, deadline)
        # /readyz can pass a moment before the system namespaces exist; demos use "default".
        await self._wait(self._apiserver, self._default_namespace_exists, deadline)

    async def _wait(self, process: ManagedProcess, check: Check, deadline: float) -> None:
        last = ""
        while True:
            if process.poll() is not None:
                log = process.log_tail()
                error = _PortTakenError if "address already in use" in log else ControlPlaneError
                raise error(f"{process.name} exited with status {process.poll()}:\n{log}")
            try:
                ok, last = await check()
            except OSError as exc:
                ok, last = False, str(exc)
            if ok:
                return
            if time.monotonic() > deadline:
                raise ControlPlaneError(
                    f"{process.name} was not ready after {self.start_timeout:.0f}s ({last}):\n"
                    f"{process.log_tail()}"
                )
            await asyncio.sleep(POLL)

    async def _etcd_healthy(self) -> tuple[bool, str]:
        response = await asyncio.to_thread(
            _http.request, "GET", f"{self.etcd_url}/health", timeout=2.0
        )
        healthy = response.status == 200 and (response.body or {}).get("health") == "true"
        return healthy, response.text

    async def _apiserver_ready(self) -> tuple[bool, str]:
        response = await self._api("GET", "/readyz", request_timeout=5.0)
        return response.status == 200, response.text

    async def _default_namespace_exists(self) -> tuple[bool, str]:
        response = await self._api("GET", "/api/v1/namespaces/default", request_timeout=5.0)
        return response.status == 200, response.text

    async def _api(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        content_type: str = "application/json",
        request_timeout: float = 10.0,
    ) -> _http.Response:
        tls = _http.client_tls(
            str(self.ca_file), str(self.client_cert_file), str(self.client_key_file)
        )
        return await asyncio.to_thread(
            _http.request,
            method,
            self.server_url + path,
            body=body,
            tls=tls,
            timeout=request_timeout,
            content_type=content_type,
        )


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()
