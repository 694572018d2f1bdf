"""``Manager``: runs controllers on shared informers and one client, with leader election,
metrics, health probes and graceful shutdown — controller-runtime's manager in asyncio.

::

    async with Client.from_control_plane(plane) as client:
        manager = Manager(client, leader_election=True)
        manager.add(HelloReconciler())
        await manager.run()          # until SIGTERM/SIGINT or manager.stop()

What ``run`` does, in order:

1. serves ``/healthz`` and ``/readyz`` (``:8081``) and ``/metrics`` (``127.0.0.1:8080``, or
   HTTPS on ``:8443`` with ``metrics_secure``), and the
   admission webhooks over HTTPS (``:9443``) if any were added (see
   :mod:`crdkit.webhook.admission`): first, as controller-runtime does, since the apiserver
   calls them whether or not this replica leads;
2. starts one informer per watched kind (shared by every controller: the primary kinds in full,
   owned kinds metadata-only), waits until all have listed, then reports ready
   (:meth:`Manager.wait_ready` returns);
3. starts the runnables that do not need the Lease (``needs_leader=False``);
4. with leader election, waits to hold the Lease (caches stay warm meanwhile, for fast
   fail-over; with ``warm_standby=False`` the Lease comes first, before step 2);
5. starts each controller's workers and the other runnables;
6. on stop: stops taking work, gives in-flight reconciles the grace period (30 s), cancels what
   is left, then cancels the runnables and waits for them, releases the Lease, stops the
   informers. If the Lease is lost instead, controllers and runnables are cancelled at once
   and :class:`~crdkit.runtime.leader.LeaderElectionLost` is raised: the process should exit,
   as a controller-runtime manager does. If a runnable raises, the manager shuts down the same
   way and :meth:`Manager.run` raises that exception.

``add(reconciler)`` wires a controller, its declared watches, ``webhooks`` and ``conversions``,
then calls the reconciler's ``setup(manager)``, where it may add informers, handlers and
runnables of its own.
``add_webhook(Webhook(Kind, validator=..., defaulter=...))`` adds webhooks on their own,
``add_conversion(Conversion(hub=..., spokes=...))`` a conversion webhook (``/convert``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prometheus_client import REGISTRY

from crdkit.client.client import Client
from crdkit.resources import KubernetesObject, resource_info
from crdkit.runtime.cache import CacheReader
from crdkit.runtime.controller import Controller
from crdkit.runtime.errors import ControllerError
from crdkit.runtime.events import EventRecorder
from crdkit.runtime.factory import SharedInformerFactory
from crdkit.runtime.http import HttpServer, Response, parse_bind_address
from crdkit.runtime.leader import (
    LeaderElectionConfig,
    LeaderElectionLost,
    LeaderElector,
    default_identity,
)
from crdkit.runtime.manager_options import (
    ManagerOptions,
    default_leader_election_id,
    default_metrics_address,
)
from crdkit.runtime.metrics_server import MetricsServer
from crdkit.runtime.runnable import Runnable
from crdkit.runtime.sharding.labels import default_shard_id, validate_name
from crdkit.runtime.watch import declared_watches
from crdkit.webhook.runner import WebhookRunner, serving_address

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from prometheus_client import CollectorRegistry

    from crdkit.runtime.informer import Informer
    from crdkit.runtime.reconciler import Reconciler
    from crdkit.runtime.result import Request
    from crdkit.runtime.sharding import Sharder, ShardMember
    from crdkit.webhook.admission import Webhook
    from crdkit.webhook.conversion import Conversion

__all__ = [
    "INFORMER_REPORTING_CONTROLLER",
    "CacheSyncTimeout",
    "Manager",
    "ManagerOptions",
    "default_leader_election_id",
    "default_metrics_address",
]

INFORMER_REPORTING_CONTROLLER = "crdkit.io/informer"
"""``reportingController`` of the Events a manager's informers record (``InvalidObject``)."""

log = logging.getLogger("crdkit.runtime.manager")

_SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


class CacheSyncTimeout(ControllerError, TimeoutError):
    """The caches did not sync within ``cache_sync_timeout``; names each informer that did
    not and the last error it saw (often a 403: the role lacks list or watch), or, when the
    apiserver could not be reached at all, that (``connection_problem``)."""

    def __init__(
        self,
        timeout: float,
        unsynced: list[tuple[str, BaseException | None]],
        connection_problem: str | None = None,
    ) -> None:
        self.timeout = timeout
        self.unsynced = unsynced
        self.connection_problem = connection_problem
        if connection_problem is not None:
            names = ", ".join(name for name, _ in unsynced)
            super().__init__(
                f"caches did not sync within {timeout:g}s: {connection_problem} ({names} "
                "never listed)"
            )
            return
        details = ", ".join(
            f"{name} (last error: {error})" if error is not None else f"{name} (no error seen)"
            for name, error in unsynced
        )
        super().__init__(f"caches did not sync within {timeout:g}s: {details}")


@dataclass(frozen=True)
class _RunnableEntry:
    name: str
    start: Callable[[], Awaitable[None]]
    needs_leader: bool
    given: Runnable | Callable[[], Awaitable[None]]  # what add_runnable was given


class Manager:
    """Owns the client's informers and runs controllers; see the module docstring.

    What it is told is a :class:`~crdkit.runtime.manager_options.ManagerOptions`: the
    namespace it watches (``None``: all), leader election, the metrics, probe and webhook
    servers, workers per controller, the grace period and the cache sync timeout. Addresses use
    controller-runtime's spelling (``":8080"``, ``"127.0.0.1:0"`` for a free port, ``"0"`` to
    turn the server off).

    Webhooks: ``webhook.cert_dir`` holds ``tls.crt``/``tls.key`` (cert-manager's layout,
    reloaded when renewed); without it a self-signed pair for ``webhook.hosts`` is made and its
    CA is :attr:`webhook_ca_bundle`. ``webhook.install`` (development) names the webhook
    configurations the manager applies itself, calling it at ``webhook.url`` (default
    ``https://127.0.0.1:<port>``) with that CA.

    ``metrics.secure`` serves ``/metrics`` over HTTPS to callers whose bearer token RBAC allows
    ``get /metrics`` (``crdkit.runtime.metrics_auth``), with the pair in ``metrics.cert_dir``
    (reloaded when renewed) or a self-signed one; plain HTTP otherwise.
    """

    def __init__(
        self,
        client: Client,
        options: ManagerOptions | None = None,
        *,
        registry: CollectorRegistry | None = None,
        clock: Callable[[], float] | None = None,
        **shorthand: Any,
    ) -> None:
        """``options`` or, for short, their keywords (``leader_election=True``,
        ``metrics_bind_address="0"``: :meth:`ManagerOptions.from_shorthand`), not both.

        ``registry`` is where the metrics go (default: prometheus-client's global one);
        ``clock`` is the leader elector's (default ``time.monotonic``): tests on a virtual clock
        pass ``loop.time``."""
        if options is None:
            options = ManagerOptions.from_shorthand(shorthand)
        elif shorthand:
            raise TypeError(
                f"Manager() got options and the keyword {next(iter(shorthand))!r}: give one"
            )
        self.options = options
        """What the manager was told, kept whole: each part reads its group of it."""
        election = options.leader_election
        self.client = client
        self.identity = election.identity or default_identity()
        self.registry = registry if registry is not None else REGISTRY
        # Each server is given its group of the options whole, as controller-runtime gives
        # `Options.Metrics` to its metrics server. The addresses are read now, so a bad one
        # fails here rather than once the caches have synced.
        self._metrics_server = MetricsServer(options.metrics, client=client, registry=self.registry)
        self._probe_address = parse_bind_address(
            options.health_probe_bind_address, field="health_probe_bind_address"
        )
        serving_address(options.webhook)  # checked now; the runner is made at start, if needed
        self.webhooks: list[Webhook[Any]] = []
        self.conversions: list[Conversion] = []
        self.webhook_runner: WebhookRunner | None = None
        # The clock of every Lease this manager holds or watches (a virtual one in tests).
        self._clock: Callable[[], float] = clock if clock is not None else time.monotonic
        if election.enabled:
            # Checked now so that bad timings fail at construction, not after the caches sync.
            LeaderElectionConfig(
                "check",
                "check",
                "check",
                election.lease_duration,
                election.renew_deadline,
                election.retry_period,
            )
        self.controllers: list[Controller[Any]] = []
        # The informers report objects their types refuse as Events from the manager itself
        # (they belong to no one controller: a cache is shared).
        self.informers = SharedInformerFactory(
            client,
            event_recorder=EventRecorder(
                client,
                reporting_controller=INFORMER_REPORTING_CONTROLLER,
                reporting_instance=self.identity,
            ),
            registry=self.registry,
            watch_list=options.watch_list,
        )
        # Scoped like the controllers' informers, so that reads share them (and a namespaced
        # role suffices for them).
        self.cache = CacheReader(self.informers, namespace=options.namespace)
        self._servers: list[HttpServer] = []
        self._stop = asyncio.Event()
        self._hurry = asyncio.Event()
        self._synced = False
        self._started = False
        self._synced_event = asyncio.Event()
        self._ended = asyncio.Event()
        self._runnables: list[_RunnableEntry] = []
        self._runnable_tasks: list[asyncio.Task[None]] = []
        self._failure: Exception | None = None
        self.elector: LeaderElector | None = None
        self._holding: asyncio.Future[None] | None = None  # renewing the leader Lease
        self.shard: ShardMember | None = None
        """With sharding: this replica's shard (made when the first controller is added)."""
        self.sharder: Sharder | None = None
        """With sharding: the ring's sharder, which runs while this replica is elected."""
        self.metrics_port: int | None = None
        self.probe_port: int | None = None

    # -- the options, by the names the manager has always given them -----------------------

    @property
    def namespace(self) -> str | None:
        """The namespace watched (``None``: all)."""
        return self.options.namespace

    @property
    def max_concurrent_reconciles(self) -> int:
        """Workers per controller, unless its reconciler sets its own."""
        return self.options.max_concurrent_reconciles

    @property
    def queue_max_wait(self) -> float | None:
        """How long a queued object may wait behind fresher ones; ``None``: no bound (0 in
        the options)."""
        return self.options.queue_max_wait or None

    @property
    def graceful_shutdown_timeout(self) -> float:
        """Seconds in-flight reconciles get to finish on stop."""
        return self.options.graceful_shutdown_timeout

    @property
    def cache_sync_timeout(self) -> float:
        """Seconds the caches may take to sync before :class:`CacheSyncTimeout`."""
        return self.options.cache_sync_timeout

    # -- building --------------------------------------------------------------------------

    def add(self, reconciler: Reconciler[Any]) -> Controller[Any]:
        """Add a controller for ``reconciler``, then call its ``setup(self)``; before :meth:`run`.

        The declared watches are wired first (a ``Watch`` map named by a string is looked up on
        ``reconciler`` now), so ``setup`` may add more informers, handlers and runnables.
        """
        if self._started:
            raise RuntimeError("controllers must be added before the manager runs")
        name = reconciler.controller_name()
        if any(c.name == name for c in self.controllers):
            raise ValueError(f"a controller named {name!r} is already added")
        kind = reconciler.primary_kind()
        info = resource_info(kind)
        shard = self._join_ring(name) if self.options.sharding.enabled else None
        if shard is not None:
            for ring_kind in (kind, *reconciler.owns):
                self.cache.select(ring_kind, shard.selector)
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
            queue_max_wait=self.queue_max_wait,
            admit=shard.admit_for(kind) if shard is not None else None,
            child_labels={shard.label: shard.shard} if shard is not None else None,
        )
        sharded = shard is not None
        primary = self._informer(kind, sharded=sharded)
        # Without predicates the primary handlers only queue the new object's key: the
        # previous version need not be decoded for them on every change.
        primary.add_event_handler(
            *controller.primary_handlers(reconciler.predicates),
            reads_old=reconciler.predicates is not None,
        )
        if shard is not None:
            primary.add_event_handler(*shard.drain_handlers(controller), reads_old=False)
            shard.follow(primary)
            shard.serve(controller, primary)
        for owned in reconciler.owns:
            owned_informer = self._informer(owned, metadata_only=True, sharded=sharded)
            owned_informer.add_event_handler(*controller.owned_handlers())
            if shard is not None:
                # A taken-over orphan's children are read from here: they must be seen.
                shard.follow(owned_informer)
        for watch in declared_watches(type(reconciler)):
            map_fn = watch.resolve(reconciler)
            self._informer(watch.kind, metadata_only=watch.metadata_only).add_event_handler(
                *controller.watch_handlers(map_fn, watch.predicates)
            )
        self.controllers.append(controller)
        for webhook in reconciler.webhooks:
            self.add_webhook(webhook)
        for conversion in reconciler.conversions:
            self.add_conversion(conversion)
        reconciler.setup(self)
        return controller

    def add_webhook(self, webhook: Webhook[Any]) -> None:
        """Serve ``webhook`` (validator and/or defaulter) with the manager; before :meth:`run`."""
        if self._started:
            raise RuntimeError("webhooks must be added before the manager runs")
        info = webhook.info
        if any(
            w.info.api_version == info.api_version and w.info.kind == info.kind
            for w in self.webhooks
        ):
            raise ValueError(f"a webhook for {info.kind} ({info.api_version}) is already added")
        self.webhooks.append(webhook)

    def add_conversion(self, conversion: Conversion) -> None:
        """Serve ``conversion`` at ``/convert`` with the webhooks; before :meth:`run`."""
        if self._started:
            raise RuntimeError("conversions must be added before the manager runs")
        if any(c.group_kind == conversion.group_kind for c in self.conversions):
            raise ValueError(f"a conversion for {conversion.group_kind[1]} is already added")
        self.conversions.append(conversion)

    @property
    def webhook_port(self) -> int:
        """The webhook server's port, once serving."""
        if self.webhook_runner is None:
            raise RuntimeError("the webhook server is not started")
        return self.webhook_runner.port

    @property
    def webhook_ca_bundle(self) -> bytes | None:
        """The PEM CA of the serving certificate (self-signed, or the cert dir's ``ca.crt``)."""
        return self.webhook_runner.ca_bundle if self.webhook_runner is not None else None

    def add_runnable(
        self,
        runnable: Runnable | Callable[[], Awaitable[None]],
        *,
        needs_leader: bool | None = None,
    ) -> None:
        """Run ``runnable`` with the manager; call before :meth:`run`.

        A :class:`~crdkit.runtime.runnable.Runnable` has its ``setup(self)`` called now and
        ``run(self)`` once it may start; a bare async function is called with no arguments.
        ``needs_leader`` (default: the Runnable's own, ``True`` for a function) says whether it
        waits for the Lease when leader election is on; others start once the caches synced.
        """
        if self._started:
            raise RuntimeError("runnables must be added before the manager runs")
        if isinstance(runnable, Runnable):
            leader = runnable.needs_leader if needs_leader is None else needs_leader
            runnable.setup(self)
            start: Callable[[], Awaitable[None]] = functools.partial(runnable.run, self)
            name = type(runnable).__qualname__
        elif callable(runnable):
            leader = True if needs_leader is None else needs_leader
            start = runnable
            name = getattr(runnable, "__qualname__", None) or repr(runnable)
        else:
            raise TypeError(
                f"add_runnable: expected a Runnable or an async function, got {runnable!r}"
            )
        self._runnables.append(_RunnableEntry(name, start, leader, runnable))

    @property
    def runnables(self) -> tuple[Runnable | Callable[[], Awaitable[None]], ...]:
        """What :meth:`add_runnable` was given, in order (``crdkit gen-rbac`` reads the
        ``rbac`` of the Runnables a reconciler's ``setup`` adds)."""
        return tuple(entry.given for entry in self._runnables)

    def _informer(
        self, kind: type[KubernetesObject], metadata_only: bool = False, *, sharded: bool = False
    ) -> Informer[Any]:
        # The factory shares one informer per kind (and shape) among all controllers; a
        # shard's informers of its ring's kinds see only the objects labelled for it.
        namespace = self.namespace if resource_info(kind).namespaced else None
        selector = self.shard.selector if sharded and self.shard is not None else None
        if metadata_only:
            return self.informers.metadata_informer(
                kind, namespace=namespace, label_selector=selector
            )
        return self.informers.informer(kind, namespace=namespace, label_selector=selector)

    def _reader(self, kind: type[KubernetesObject]) -> Any:
        informer = self._informer(kind, sharded=self.shard is not None)

        def read(request: Request) -> Any:
            # A private copy: the reconciler may change it freely without corrupting the cache
            # that other controllers (and the informer's update diffs) read.
            return informer.store.private_copy_by_name(request.name, request.namespace)

        return read

    def _join_ring(self, controller_name: str) -> ShardMember:
        """This replica's shard, made when the first controller is added (its name is the
        ring's unless the options name one)."""
        if self.shard is not None:
            return self.shard
        from crdkit.runtime.sharding import ShardMember

        options = self.options.sharding
        election = self.options.leader_election
        ring = validate_name(options.ring or controller_name, field="sharding.ring")
        shard = validate_name(options.shard_id or default_shard_id(), field="sharding.shard_id")
        self.shard = ShardMember(
            self.client,
            ring=ring,
            shard=shard,
            identity=self.identity,
            lease_namespace=self._lease_namespace(),
            lease_duration=election.lease_duration,
            renew_deadline=election.renew_deadline,
            retry_period=election.retry_period,
            registry=self.registry,
            clock=self._clock,
        )
        return self.shard

    # -- state -----------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Whether every cache has synced (what ``/readyz`` reports)."""
        return self._synced and not self._stop.is_set()

    async def wait_ready(self) -> None:
        """Return once every cache has synced and the manager is ready (what ``/readyz``
        reports); ``RuntimeError`` if :meth:`run` ended (stopped or failed) before that.

        Meant for another task while ``run`` runs (a test, a runnable's helper).
        """
        if not self.ready and not self._ended.is_set():
            waits = {
                asyncio.ensure_future(self._synced_event.wait()),
                asyncio.ensure_future(self._ended.wait()),
            }
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for wait in waits:
                    wait.cancel()
                await asyncio.gather(*waits, return_exceptions=True)
        if not self.ready:
            if self._ended.is_set() and not self._synced:
                raise RuntimeError("the manager's run() ended before it was ready")
            if self._ended.is_set():
                raise RuntimeError("the manager's run() has ended: it is no longer ready")
            raise RuntimeError("the manager is stopping: it will not become ready")

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
        """Run until :meth:`stop`; raises ``LeaderElectionLost`` if the lease is lost, and a
        runnable's exception if one fails (after shutting down)."""
        if self._started:
            raise RuntimeError("a manager runs once")
        if not (self.controllers or self._runnables or self.webhooks or self.conversions):
            raise RuntimeError(
                "nothing to run: add a reconciler with manager.add(...), a runnable with "
                "manager.add_runnable(...) or a webhook with manager.add_webhook(...)"
            )
        if isinstance(self.client, Client) and not self.client.transport.is_open:
            # Otherwise every informer would retry its list against a closed client forever.
            raise RuntimeError(
                "the manager's client is not open: use it inside `async with Client(...)` "
                "around manager.run()"
            )
        self._started = True
        lost = False
        try:
            lost = await self._serve()
        finally:
            await self._shutdown(lost)
            self._ended.set()
        if self._failure is not None:
            raise self._failure
        if lost:
            raise LeaderElectionLost(f"{self.identity} lost its lease")

    async def _serve(self) -> bool:
        """Start everything in order and run until stopped; whether the lease was lost."""
        await self._start_servers()
        election = self.options.leader_election
        cold = election.enabled and not election.warm_standby and self.shard is None
        if cold and not await self._acquire_leadership():
            return False
        if not await self._start_caches():
            return False
        self._start_runnables(needs_leader=False)
        if self.shard is not None:
            return await self._serve_shard(self.shard)
        if election.enabled and not cold and not await self._acquire_leadership():
            return False
        holding = self._holding
        if holding is not None and holding.done():
            return self._lost(holding)  # while a cold standby's caches synced
        for controller in self.controllers:
            controller.start()
        self._start_runnables(needs_leader=True)
        log.info("controllers started", extra={"fields": {"identity": self.identity}})
        if holding is None:
            await self._stop.wait()
            return False
        held = await self._race_stop(holding)
        return False if held is None else self._lost(held)

    @staticmethod
    def _lost(held: asyncio.Future[Any]) -> bool:
        """A finished renewal: the Lease was lost (True), or its error is raised."""
        error = held.exception()
        if error is not None and not isinstance(error, LeaderElectionLost):
            raise error
        return True

    async def _acquire_leadership(self) -> bool:
        """Wait to hold the leader Lease; False if asked to stop first."""
        self.elector = LeaderElector(
            self.client, self._election_config(), registry=self.registry, clock=self._clock
        )
        acquired = await self._race_stop(self.elector.acquire())
        if acquired is None:
            return False
        acquired.result()
        # Renewed from now on, also while a cold standby's caches sync after it.
        self._holding = asyncio.ensure_future(self.elector.hold())
        return True

    async def _serve_shard(self, shard: ShardMember) -> bool:
        """As :meth:`_serve` after the caches, for a replica of a ring: hold the shard's Lease
        and run its controllers, and meanwhile stand for the ring's sharder (``role`` may
        leave out either). Whether a Lease was lost."""
        role = self.options.sharding.role
        # Standing for the sharder starts now, not once the shard's Lease is held: a restarted
        # replica waits out its predecessor's shard Lease first, and an election begun only
        # then waits a lease duration more before it may take the sharder's Lease of a dead
        # holder, so a ring whose sharder died went two lease durations without one (crash
        # tests: a cleanly stopped shard's objects unowned for 30 s, kill-after:23).
        leading = asyncio.ensure_future(self._lead_ring(shard)) if role != "shard" else None
        if role != "sharder":
            await shard.start()  # the published membership: the gate's, and the selectors'
            acquired = await self._race_stop(shard.elector.acquire())
            if acquired is None:
                if leading is not None:
                    leading.cancel()
                    await asyncio.gather(leading, return_exceptions=True)
                return False
            acquired.result()
            for controller in self.controllers:
                controller.start()
            log.info(
                "shard started",
                extra={
                    "fields": {"ring": shard.ring, "shard": shard.shard, "identity": self.identity}
                },
            )
        duties: list[Awaitable[None]] = []
        if role != "sharder":
            duties.append(shard.elector.hold())
        if leading is not None:
            duties.append(leading)
        held = await self._race_stop(self._until_one_ends(duties))
        return False if held is None else self._lost(held)

    @staticmethod
    async def _until_one_ends(duties: list[Awaitable[None]]) -> None:
        """Run ``duties`` (renewing the shard's Lease, standing for the sharder's) until the
        first ends (a Lease lost), which ends the others."""
        tasks = [asyncio.ensure_future(duty) for duty in duties]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        for task in done:
            task.result()

    async def _lead_ring(self, shard: ShardMember) -> None:
        from crdkit.runtime.sharding import Sharder

        self.elector = LeaderElector(
            self.client,
            self._election_config(name=f"{shard.ring}-sharder"),
            registry=self.registry,
            clock=self._clock,
        )
        await self.elector.acquire()
        self.sharder = Sharder(
            self.client,
            ring=shard.ring,
            lease_namespace=shard.elector.config.lease_namespace,
            # With sharding, every controller is the ring's.
            primary_kinds=[controller.kind for controller in self.controllers],
            owned_kinds=[kind for c in self.controllers for kind in c.reconciler.owns],
            namespace=self.namespace,
            registry=self.registry,
            clock=self._clock,
        )
        sharder = self.sharder
        entry = _RunnableEntry(f"sharder {shard.ring}", sharder.run, False, sharder.run)
        self._runnable_tasks.append(
            asyncio.get_running_loop().create_task(
                self._run_runnable(entry), name=f"sharder {shard.ring}"
            )
        )
        self._start_runnables(needs_leader=True)
        await self.elector.hold()

    def _start_runnables(self, *, needs_leader: bool) -> None:
        loop = asyncio.get_running_loop()
        for entry in self._runnables:
            if entry.needs_leader == needs_leader:
                self._runnable_tasks.append(
                    loop.create_task(self._run_runnable(entry), name=f"runnable {entry.name}")
                )

    async def _run_runnable(self, entry: _RunnableEntry) -> None:
        log.info("starting runnable", extra={"fields": {"runnable": entry.name}})
        try:
            await entry.start()
        except asyncio.CancelledError:
            raise
        except Exception as error:
            # controller-runtime's semantics: one part failing stops the whole manager, and
            # run() returns that error (the process exits, and is restarted whole).
            log.error(
                "runnable %s failed, stopping the manager",
                entry.name,
                exc_info=True,
                extra={"fields": {"runnable": entry.name}},
            )
            if self._failure is None:
                self._failure = error
            self._stop.set()
        else:
            log.info("runnable finished", extra={"fields": {"runnable": entry.name}})

    async def _stop_runnables(self) -> None:
        tasks, self._runnable_tasks = self._runnable_tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

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
            raise CacheSyncTimeout(
                self.cache_sync_timeout,
                [
                    (informer.description, informer.last_error)
                    for informer in self.informers.informers.values()
                    if not informer.has_synced
                ],
                # (A stand-in client, as some unit tests give, may not know.)
                getattr(self.client, "connection_problem", None),
            )
        synced.result()
        self._synced = True
        self._synced_event.set()
        log.info("caches synced", extra={"fields": {"informers": len(self.informers.informers)}})
        return True

    @property
    def home_namespace(self) -> str:
        """The namespace this operator keeps its own objects in (its Lease, a scheduler's
        published view): the leader election's, else the one it watches, else the one its
        pod runs in, else ``default``."""
        return self._lease_namespace()

    def _lease_namespace(self) -> str:
        namespace = self.options.leader_election.namespace or self.namespace
        if namespace is None and _SERVICE_ACCOUNT_NAMESPACE.is_file():
            namespace = _SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or None
        return namespace or "default"

    def _election_config(self, name: str | None = None) -> LeaderElectionConfig:
        election = self.options.leader_election
        if name is None:
            name = election.id or default_leader_election_id(c.name for c in self.controllers)
        return LeaderElectionConfig(
            lease_name=name,
            lease_namespace=self._lease_namespace(),
            identity=self.identity,
            lease_duration=election.lease_duration,
            renew_deadline=election.renew_deadline,
            retry_period=election.retry_period,
        )

    async def _shutdown(self, lost: bool) -> None:
        self._stop.set()
        if self._holding is not None and not self._holding.done():
            self._holding.cancel()  # stopped before the controllers started
            await asyncio.gather(self._holding, return_exceptions=True)
        grace = 0.0 if lost else self.graceful_shutdown_timeout
        if lost:
            # Another replica may already run them: not a moment longer here.
            await self._stop_runnables()
        stops = [asyncio.ensure_future(c.stop(grace)) for c in self.controllers if c.started]
        if stops:
            hurry = asyncio.ensure_future(self._hurry.wait())
            await asyncio.wait({*stops, hurry}, return_when=asyncio.FIRST_COMPLETED)
            if not all(s.done() for s in stops):
                # A second signal: no more grace.
                await asyncio.gather(*(c.stop(0) for c in self.controllers if c.started))
            hurry.cancel()
            await asyncio.gather(*stops, hurry, return_exceptions=True)
        # After the controllers' grace (their reconciles may rely on a runnable), before the
        # informers (runnables read the caches until they are cancelled).
        await self._stop_runnables()
        if self.elector is not None and not lost:
            await self.elector.release()
        if self.shard is not None and not lost:
            # After the controllers stopped: the sharder hands this shard's objects on at
            # once, and none is still being reconciled here.
            await self.shard.elector.release()
        if self.shard is not None:
            await self.shard.stop()
        await self.informers.stop()
        for server in self._servers:
            await server.close()
        self._servers = []
        await self._metrics_server.close()
        if self.webhook_runner is not None:
            # Last: the apiserver calls the webhooks until the very end (and a replacement
            # may already listen on the same port).
            await self.webhook_runner.close()
        log.info("manager stopped", extra={"fields": {"identity": self.identity}})

    # -- HTTP ------------------------------------------------------------------------------

    async def _start_servers(self) -> None:
        if self._probe_address is not None:
            probes = HttpServer({"/healthz": self._healthz, "/readyz": self._readyz})
            await probes.start(*self._probe_address)
            self._servers.append(probes)
            self.probe_port = probes.port
        await self._metrics_server.start()
        self.metrics_port = self._metrics_server.port
        if self.webhooks or self.conversions:
            self.webhook_runner = WebhookRunner(
                self.webhooks, self.options.webhook, conversions=self.conversions
            )
            await self.webhook_runner.start(self.client)

    async def _healthz(self) -> Response:
        return Response(200, b"ok\n")

    async def _readyz(self) -> Response:
        return Response(200, b"ok\n") if self.ready else Response(503, b"caches not synced\n")
