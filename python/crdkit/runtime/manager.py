"""``Manager``: runs controllers on shared informers and one client, with leader election,
metrics, health probes and graceful shutdown — controller-runtime's manager in asyncio.

::

    async with Client.from_control_plane(plane) as client:
        manager = Manager(client, leader_election=True)
        manager.add(HelloReconciler())
        await manager.run()          # until SIGTERM/SIGINT or manager.stop()

What ``run`` does, in order:

1. serves ``/healthz`` and ``/readyz`` (``:8081``) and ``/metrics`` (``:8080``);
2. starts one informer per watched kind (shared by every controller: the primary kinds in full,
   owned kinds metadata-only), waits until all have listed, then reports ready;
3. with leader election, waits to hold the Lease (caches stay warm meanwhile, for fast
   fail-over);
4. starts each controller's workers;
5. on stop: stops taking work, gives in-flight reconciles the grace period (30 s), cancels what
   is left, releases the Lease, stops the informers. If the Lease is lost instead, controllers
   are cancelled at once and :class:`~crdkit.runtime.leader.LeaderElectionLost` is raised: the
   process should exit, as a controller-runtime manager does.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from crdkit.resources import KubernetesObject, resource_info
from crdkit.runtime.cache import CacheReader
from crdkit.runtime.controller import Controller
from crdkit.runtime.events import EventRecorder
from crdkit.runtime.factory import SharedInformerFactory
from crdkit.runtime.http import HttpServer, Response, parse_bind_address
from crdkit.runtime.leader import (
    LeaderElectionConfig,
    LeaderElectionLost,
    LeaderElector,
    default_identity,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from prometheus_client import CollectorRegistry

    from crdkit.client import Client
    from crdkit.runtime.informer import Informer
    from crdkit.runtime.reconciler import Reconciler
    from crdkit.runtime.result import Request

__all__ = ["Manager", "default_leader_election_id"]

log = logging.getLogger("crdkit.runtime.manager")

_SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def default_leader_election_id(controller_names: Iterable[str]) -> str:
    """The Lease name when none is given: the controllers' names, then ``-leader``.

    ``crdkit gen-rbac`` grants get and update on exactly this Lease, so both use this function.
    """
    return "-".join(sorted(controller_names))[:50] + "-leader"


class Manager:
    """Owns the client's informers and runs controllers; see the module docstring.

    ``namespace`` limits every watch to one namespace (``None``: all). Addresses use
    controller-runtime's spelling (``":8080"``, ``"127.0.0.1:0"`` for a free port, ``"0"`` to
    turn the server off).
    """

    def __init__(
        self,
        client: Client,
        *,
        namespace: str | None = None,
        leader_election: bool = False,
        leader_election_id: str | None = None,
        leader_election_namespace: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        identity: str | None = None,
        metrics_bind_address: str = ":8080",
        health_probe_bind_address: str = ":8081",
        max_concurrent_reconciles: int = 1,
        graceful_shutdown_timeout: float = 30.0,
        cache_sync_timeout: float = 120.0,
        registry: CollectorRegistry | None = None,
    ) -> None:
        if max_concurrent_reconciles < 1:
            raise ValueError(
                f"max_concurrent_reconciles must be at least 1, got {max_concurrent_reconciles}"
            )
        if graceful_shutdown_timeout < 0:
            raise ValueError("graceful_shutdown_timeout must not be negative")
        self.client = client
        self.namespace = namespace
        self.identity = identity or default_identity()
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self.graceful_shutdown_timeout = graceful_shutdown_timeout
        self.cache_sync_timeout = cache_sync_timeout
        self.registry = registry if registry is not None else REGISTRY
        self._metrics_address = parse_bind_address(
            metrics_bind_address, field="metrics_bind_address"
        )
        self._probe_address = parse_bind_address(
            health_probe_bind_address, field="health_probe_bind_address"
        )
        self._leader_election = leader_election
        self._leader_election_id = leader_election_id
        self._leader_election_namespace = leader_election_namespace
        self._timings = (lease_duration, renew_deadline, retry_period)
        if leader_election:
            # Checked now so that bad timings fail at construction, not after the caches sync.
            LeaderElectionConfig("check", "check", "check", *self._timings)
        self.controllers: list[Controller[Any]] = []
        self.informers = SharedInformerFactory(client)
        self.cache = CacheReader(self.informers)
        self._servers: list[HttpServer] = []
        self._stop = asyncio.Event()
        self._hurry = asyncio.Event()
        self._synced = False
        self._started = False
        self.elector: LeaderElector | None = None
        self.metrics_port: int | None = None
        self.probe_port: int | None = None

    # -- building --------------------------------------------------------------------------

    def add(self, reconciler: Reconciler[Any]) -> Controller[Any]:
        """Add a controller for ``reconciler``; call before :meth:`run`."""
        if self._started:
            raise RuntimeError("controllers must be added before the manager runs")
        name = reconciler.controller_name()
        if any(c.name == name for c in self.controllers):
            raise ValueError(f"a controller named {name!r} is already added")
        kind = reconciler.primary_kind()
        info = resource_info(kind)
        controller: Controller[Any] = Controller(
            reconciler,
            client=self.client,
            reader=self._reader(kind),
            cache=self.cache,
            recorder=EventRecorder(
                self.client,
                reporting_controller=f"{info.group or 'crdkit.io'}/{name}",
                reporting_instance=self.identity,
            ),
            max_concurrent_reconciles=self.max_concurrent_reconciles,
            registry=self.registry,
        )
        self._informer(kind).add_event_handler(*controller.primary_handlers(reconciler.predicates))
        for owned in reconciler.owns:
            self._informer(owned, metadata_only=True).add_event_handler(
                *controller.owned_handlers()
            )
        for watched, map_fn in reconciler.watches:
            self._informer(watched).add_event_handler(*controller.mapped_handlers(map_fn))
        self.controllers.append(controller)
        return controller

    def _informer(self, kind: type[KubernetesObject], metadata_only: bool = False) -> Informer[Any]:
        # The factory shares one informer per kind (and shape) among all controllers.
        namespace = self.namespace if resource_info(kind).namespaced else None
        if metadata_only:
            return self.informers.metadata_informer(kind, namespace=namespace)
        return self.informers.informer(kind, namespace=namespace)

    def _reader(self, kind: type[KubernetesObject]) -> Any:
        def read(request: Request) -> Any:
            # A private copy: the reconciler may change it freely without corrupting the cache
            # that other controllers (and the informer's update diffs) read.
            return self._informer(kind).store.private_copy_by_name(request.name, request.namespace)

        return read

    # -- state -----------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Whether every cache has synced (what ``/readyz`` reports)."""
        return self._synced and not self._stop.is_set()

    def stop(self) -> None:
        """Ask :meth:`run` to shut down gracefully; a second call skips the grace period."""
        if self._stop.is_set():
            self._hurry.set()
        self._stop.set()

    def install_signal_handlers(self) -> None:
        """SIGTERM and SIGINT call :meth:`stop` (the second one ends the grace period)."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._on_signal, signum)

    def _on_signal(self, signum: int) -> None:
        log.info("received %s, shutting down", signal.Signals(signum).name)
        self.stop()

    # -- running ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Run until :meth:`stop`; raises ``LeaderElectionLost`` if the lease is lost."""
        if self._started:
            raise RuntimeError("a manager runs once")
        if not self.controllers:
            raise RuntimeError("no controllers: add a reconciler with manager.add(...)")
        self._started = True
        lost = False
        try:
            await self._start_servers()
            if not await self._start_caches():
                return
            if self._leader_election:
                self.elector = LeaderElector(
                    self.client, self._election_config(), registry=self.registry
                )
                acquired = await self._race_stop(self.elector.acquire())
                if acquired is None:
                    return
                acquired.result()
            for controller in self.controllers:
                controller.start()
            log.info("controllers started", extra={"fields": {"identity": self.identity}})
            if self.elector is not None:
                held = await self._race_stop(self.elector.hold())
                if held is not None:
                    error = held.exception()
                    if error is not None and not isinstance(error, LeaderElectionLost):
                        raise error
                    lost = True
            else:
                await self._stop.wait()
        finally:
            await self._shutdown(lost)
        if lost:
            raise LeaderElectionLost(f"{self.identity} lost its lease")

    async def _race_stop(self, work: Any) -> asyncio.Future[Any] | None:
        """Run ``work`` until it ends or stop is asked; the finished task, or None if stopped."""
        task = asyncio.ensure_future(work)
        stopper = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pending in (task, stopper):
                if not pending.done():
                    pending.cancel()
            await asyncio.gather(task, stopper, return_exceptions=True)
        return task if task.done() and not task.cancelled() else None

    async def _start_caches(self) -> bool:
        await self.informers.start()
        synced: asyncio.Future[Any] = asyncio.ensure_future(self.informers.wait_for_sync())
        stopper: asyncio.Future[Any] = asyncio.ensure_future(self._stop.wait())
        try:
            done, _ = await asyncio.wait(
                {synced, stopper},
                timeout=self.cache_sync_timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            stopper.cancel()
            if not synced.done():
                synced.cancel()
            await asyncio.gather(synced, stopper, return_exceptions=True)
        if synced not in done:
            if self._stop.is_set():
                return False
            raise TimeoutError(
                f"caches did not sync within {self.cache_sync_timeout}s: "
                + ", ".join(
                    i.description for i in self.informers.informers.values() if not i.has_synced
                )
            )
        synced.result()
        self._synced = True
        log.info("caches synced", extra={"fields": {"informers": len(self.informers.informers)}})
        return True

    def _election_config(self) -> LeaderElectionConfig:
        name = self._leader_election_id or default_leader_election_id(
            c.name for c in self.controllers
        )
        namespace = self._leader_election_namespace or self.namespace
        if namespace is None and _SERVICE_ACCOUNT_NAMESPACE.is_file():
            namespace = _SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or None
        return LeaderElectionConfig(
            lease_name=name,
            lease_namespace=namespace or "default",
            identity=self.identity,
            lease_duration=self._timings[0],
            renew_deadline=self._timings[1],
            retry_period=self._timings[2],
        )

    async def _shutdown(self, lost: bool) -> None:
        self._stop.set()
        grace = 0.0 if lost else self.graceful_shutdown_timeout
        stops = [asyncio.ensure_future(c.stop(grace)) for c in self.controllers if c.started]
        if stops:
            hurry = asyncio.ensure_future(self._hurry.wait())
            await asyncio.wait({*stops, hurry}, return_when=asyncio.FIRST_COMPLETED)
            if not all(s.done() for s in stops):
                # A second signal: no more grace.
                await asyncio.gather(*(c.stop(0) for c in self.controllers if c.started))
            hurry.cancel()
            await asyncio.gather(*stops, hurry, return_exceptions=True)
        if self.elector is not None and not lost:
            await self.elector.release()
        await self.informers.stop()
        for server in self._servers:
            await server.close()
        self._servers = []
        log.info("manager stopped", extra={"fields": {"identity": self.identity}})

    # -- HTTP ------------------------------------------------------------------------------

    async def _start_servers(self) -> None:
        if self._probe_address is not None:
            probes = HttpServer({"/healthz": self._healthz, "/readyz": self._readyz})
            await probes.start(*self._probe_address)
            self._servers.append(probes)
            self.probe_port = probes.port
        if self._metrics_address is not None:
            metrics = HttpServer({"/metrics": self._metrics})
            await metrics.start(*self._metrics_address)
            self._servers.append(metrics)
            self.metrics_port = metrics.port

    async def _healthz(self) -> Response:
        return Response(200, b"ok\n")

    async def _readyz(self) -> Response:
        return Response(200, b"ok\n") if self.ready else Response(503, b"caches not synced\n")

    async def _metrics(self) -> Response:
        return Response(200, generate_latest(self.registry), CONTENT_TYPE_LATEST)
