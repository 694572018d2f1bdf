"""``Controller``: a work queue, its workers, and the reconcile loop around one ``Reconciler``.

Event handlers turn watch events into :class:`Request` keys (:meth:`Controller.enqueue_primary`,
:meth:`Controller.enqueue_owner`, :meth:`Controller.enqueue_mapped`); workers take keys from the
queue, read the object from the cache and call the reconciler:

==========================================  ====================================================
reconcile outcome                           what happens to the key
==========================================  ====================================================
returns ``None`` / ``Result()``             forgotten (backoff reset) until the next event
``Result(requeue_after=s)``                 forgotten, added again after ``s`` seconds
``Result(requeue=True)``                    added again with the rate limiter's backoff
raises ``TerminalError``                    logged and counted, forgotten: not retried
raises anything else / times out            logged and counted, retried with backoff
==========================================  ====================================================

If the reconciler defines ``finalize``, the controller first makes sure the object carries its
finalizer; once the object is being deleted it calls ``finalize`` instead of ``reconcile`` and
removes the finalizer when that succeeds.

Metrics are controller-runtime's: ``controller_runtime_reconcile_total{result}``,
``..._reconcile_errors_total``, ``..._terminal_reconcile_errors_total``,
``..._reconcile_time_seconds``, ``..._active_workers``, ``..._max_concurrent_reconciles``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from crdkit.client.errors import NotFound
from crdkit.resources import KubernetesObject, resource_info
from crdkit.runtime.context import Context
from crdkit.runtime.informer_handlers import event_origin
from crdkit.runtime.logs import ReconcileLogger
from crdkit.runtime.metrics import runtime_metrics
from crdkit.runtime.queue import (
    DEFAULT_MAX_WAIT,
    PRIORITY_LOW,
    PRIORITY_NORMAL,
    QueueShutDown,
    WorkQueue,
)
from crdkit.runtime.ratelimit import require_rate_limiter
from crdkit.runtime.result import Request, Result, TerminalError

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

    from crdkit.client import Client
    from crdkit.runtime.cache import CacheReader
    from crdkit.runtime.events import EventRecorder
    from crdkit.runtime.predicates import Predicate
    from crdkit.runtime.ratelimit import RateLimiter
    from crdkit.runtime.reconciler import MapFunc, Reconciler
    from crdkit.runtime.watch import AnyMapFunc

__all__ = ["Controller", "ObjectReader"]

log = logging.getLogger("crdkit.runtime.controller")

T = TypeVar("T", bound=KubernetesObject)

ObjectReader = Callable[[Request], Any]
"""Reads the current primary object for a request from the cache (``None`` if absent).

What it returns belongs to the reconcile, which may change it: a reader over a cache returns a
private copy (:meth:`~crdkit.runtime.store.Store.private_copy`), never the cached object."""


def _key_of(obj: Any) -> str:
    """``namespace/name`` of a watched object, for logs (whatever shape it has)."""
    metadata = getattr(obj, "metadata", None)
    name = getattr(metadata, "name", None) or "?"
    namespace = getattr(metadata, "namespace", None)
    return f"{namespace}/{name}" if namespace else str(name)


def _own_rate_limiter(reconciler: Reconciler[Any]) -> RateLimiter[Request] | None:
    """The limiter ``reconciler.rate_limiter()`` gives (``None``: the default), checked."""
    field = f"{type(reconciler).__qualname__}.rate_limiter"
    method = reconciler.rate_limiter
    if not callable(method) or hasattr(method, "when"):
        # A limiter set as a class attribute would be one instance for every controller built
        # from the class, sharing the failure history of objects that have the same key.
        raise TypeError(
            f"{field} must be a method returning the controller's limiter "
            "(def rate_limiter(self) -> RateLimiter[Request]), so that each controller gets "
            f"its own; got {method!r}"
        )
    limiter = method()
    if limiter is None:
        return None
    return require_rate_limiter(limiter, f"{field}()")


class Controller(Generic[T]):
    """Runs one reconciler; built and started by :class:`~crdkit.runtime.manager.Manager`."""

    def __init__(
        self,
        reconciler: Reconciler[T],
        *,
        client: Client,
        reader: ObjectReader,
        recorder: EventRecorder,
        cache: CacheReader,
        max_concurrent_reconciles: int = 1,
        rate_limiter: RateLimiter[Request] | None = None,
        registry: CollectorRegistry | None = None,
        queue_max_wait: float | None = DEFAULT_MAX_WAIT,
        admit: Callable[[Any], Awaitable[bool]] | None = None,
        child_labels: Mapping[str, str] | None = None,
    ) -> None:
        """``admit``, if given, is asked before each reconcile whether to reconcile the object
        at all (a shard's gate: :class:`~crdkit.runtime.sharding.ShardMember`); it runs in
        the worker, so never beside a reconcile of the same object. ``child_labels`` go on
        the children the reconciler applies through its context (a shard's label)."""
        if max_concurrent_reconciles < 1:
            raise ValueError(
                f"max_concurrent_reconciles must be at least 1, got {max_concurrent_reconciles}"
            )
        self.reconciler = reconciler
        self.kind = reconciler.primary_kind()
        self.info = resource_info(self.kind)
        self.name = reconciler.controller_name()
        self.field_manager = self.name
        self.client = client
        self.reader = reader
        self.cache = cache
        self.recorder = recorder
        self.admit = admit
        self.child_labels = dict(child_labels or {})
        self.workers = (
            reconciler.max_concurrent_reconciles
            if reconciler.max_concurrent_reconciles is not None
            else max_concurrent_reconciles
        )
        if self.workers < 1:
            raise ValueError(f"{self.name}: max_concurrent_reconciles must be at least 1")
        own_limiter = _own_rate_limiter(reconciler)
        if rate_limiter is not None:
            rate_limiter = require_rate_limiter(rate_limiter, "rate_limiter")
        self.queue: WorkQueue[Request] = WorkQueue(
            self.name,
            rate_limiter=own_limiter if own_limiter is not None else rate_limiter,
            registry=registry,
            max_wait=queue_max_wait,
        )
        self._metrics = runtime_metrics(registry)
        self._metrics.max_concurrent_reconciles.labels(self.name).set(self.workers)
        self._active = self._metrics.active_workers.labels(self.name)
        # The children every reconcile updates, looked up once (a labels() call per reconcile
        # was a measurable part of the hot path).
        self._reconcile_time = self._metrics.reconcile_time.labels(self.name)
        self._reconcile_total = {
            outcome: self._metrics.reconcile_total.labels(self.name, outcome)
            for outcome in ("success", "error", "requeue", "requeue_after")
        }
        self._tasks: list[asyncio.Task[None]] = []
        self._log = logging.getLogger(f"crdkit.controller.{self.name}")

    # -- event handlers -------------------------------------------------------------------------

    def _request_for(self, obj: Any) -> Request | None:
        name = obj.metadata.name if obj is not None else None
        if not name:
            return None
        return Request.scoped(obj.metadata.namespace, name, namespaced=self.info.namespaced)

    def primary_handlers(
        self, predicate: Predicate | None = None
    ) -> tuple[Callable[[Any], None], Callable[[Any, Any], None], Callable[[Any], None]]:
        """``(on_add, on_update, on_delete)`` for the primary kind's informer."""

        def on_add(obj: Any) -> None:
            if predicate is None or predicate.create(obj):
                self._enqueue(self._request_for(obj))

        def on_update(old: Any, new: Any) -> None:
            if predicate is None or predicate.update(old, new):
                self._enqueue(self._request_for(new))

        def on_delete(obj: Any) -> None:
            if predicate is None or predicate.delete(obj):
                self._enqueue(self._request_for(obj))

        return on_add, on_update, on_delete

    def owner_requests(self, obj: Any) -> list[Request]:
        """The requests for ``obj``'s controlling owner, if that owner is of the primary kind."""
        for ref in obj.metadata.owner_references or ():
            if not ref.controller:
                continue
            group = ref.api_version.rpartition("/")[0]
            if ref.kind == self.info.kind and group == self.info.group:
                namespace = obj.metadata.namespace if self.info.namespaced else None
                if self.info.namespaced and not namespace:
                    return []  # a cluster-scoped object cannot have a namespaced owner
                return [Request(namespace, ref.name)]
        return []

    def owned_handlers(
        self,
    ) -> tuple[Callable[[Any], None], Callable[[Any, Any], None], Callable[[Any], None]]:
        """Handlers for an owned kind: changes reconcile the controlling owner (old and new)."""

        def on_add(obj: Any) -> None:
            for request in self.owner_requests(obj):
                self._enqueue(request)

        def on_update(old: Any, new: Any) -> None:
            for request in {*self.owner_requests(old), *self.owner_requests(new)}:
                self._enqueue(request)

        return on_add, on_update, on_add

    def mapped_handlers(
        self, map_fn: MapFunc
    ) -> tuple[Callable[[Any], None], Callable[[Any, Any], None], Callable[[Any], None]]:
        """Handlers for a mapped watch: ``map_fn(obj)`` names the requests to reconcile."""

        def on_add(obj: Any) -> None:
            self._enqueue_all(map_fn, obj)

        def on_update(old: Any, new: Any) -> None:
            self._enqueue_all(map_fn, old)
            self._enqueue_all(map_fn, new)

        return on_add, on_update, on_add

    def watch_handlers(
        self, map_fn: AnyMapFunc | None, predicate: Predicate | None = None
    ) -> tuple[
        Callable[[Any], Awaitable[None]],
        Callable[[Any, Any], Awaitable[None]],
        Callable[[Any], Awaitable[None]],
    ]:
        """Handlers for a :class:`~crdkit.runtime.watch.Watch`: ``predicate`` filters, then
        ``map_fn`` (plain or async; ``None``: the controlling owner) names the requests.

        The handlers are coroutines, so the informer awaits an async map before it hands the
        registration its next event: requests are enqueued in the order the events came.
        """
        mapper: AnyMapFunc = map_fn if map_fn is not None else self.owner_requests

        async def on_add(obj: Any) -> None:
            if predicate is None or predicate.create(obj):
                await self._enqueue_mapped(mapper, obj)

        async def on_update(old: Any, new: Any) -> None:
            if predicate is None or predicate.update(old, new):
                # Both sides: an object that moved from one primary to another must
                # reconcile the one it left as well.
                await self._enqueue_mapped(mapper, old)
                await self._enqueue_mapped(mapper, new)

        async def on_delete(obj: Any) -> None:
            if predicate is None or predicate.delete(obj):
                await self._enqueue_mapped(mapper, obj)

        return on_add, on_update, on_delete

    async def _enqueue_mapped(self, map_fn: AnyMapFunc, obj: Any) -> None:
        # A failing map is the operator's bug: logged with what it failed on, and the informer
        # (and every other handler) carries on.
        try:
            requests = map_fn(obj)
            if inspect.isawaitable(requests):
                requests = await requests
            for request in requests:
                self._enqueue(request)
        except asyncio.CancelledError:
            raise
        except Exception:
            self._log.exception(
                "map function of controller %s failed on %s",
                self.name,
                _key_of(obj),
                extra={"fields": {"controller": self.name, "object": _key_of(obj)}},
            )

    def _enqueue_all(self, map_fn: MapFunc, obj: Any) -> None:
        try:
            requests: Iterable[Request] = map_fn(obj)
            for request in requests:
                self._enqueue(request)
        except Exception:
            self._log.exception(
                "map function of controller %s failed on %s", self.name, _key_of(obj)
            )

    def _enqueue(self, request: Request | None) -> None:
        # The initial list and resyncs go behind fresh changes (the queue's wait bound keeps
        # them from starving): after a restart, a change made now is not behind every object.
        if request is not None:
            low = event_origin() != "change"
            self.queue.add(request, PRIORITY_LOW if low else PRIORITY_NORMAL)

    # -- running ----------------------------------------------------------------------------------

    @property
    def started(self) -> bool:
        """Whether the workers are running."""
        return bool(self._tasks)

    def start(self) -> None:
        """Start the workers (the caches must be synced first)."""
        if self._tasks:
            raise RuntimeError(f"controller {self.name} is already started")
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._worker(), name=f"{self.name}-worker-{i}")
            for i in range(self.workers)
        ]
        self._log.info(
            "starting workers",
            extra={"fields": {"controller": self.name, "workers": self.workers}},
        )

    async def stop(self, grace: float = 30.0) -> bool:
        """Stop taking work, give in-flight reconciles ``grace`` seconds, then cancel them.

        Returns whether every in-flight reconcile finished within the grace period.
        ``grace=0`` cancels at once (leadership lost: another replica may already be running).
        """
        drained = True
        if grace > 0:
            drained = await self.queue.shut_down_with_drain(grace)
        else:
            self.queue.shut_down()
            drained = not self.queue.processing
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        if not drained:
            self._log.warning(
                "grace period over: cancelled in-flight reconciles",
                extra={"fields": {"controller": self.name, "grace": grace}},
            )
        return drained

    async def _worker(self) -> None:
        while True:
            try:
                request = await self.queue.get()
            except QueueShutDown:
                return
            self._active.inc()
            try:
                # Shielded so that cancelling a worker during a graceful drain is never what
                # interrupts a reconcile; stop(grace=0) cancels the reconcile task directly.
                task = asyncio.ensure_future(self._process(request))
                try:
                    await asyncio.shield(task)
                except asyncio.CancelledError:
                    task.cancel()
                    with contextlib.suppress(BaseException):
                        await task
                    raise
            finally:
                self._active.dec()
                self.queue.done(request)

    async def _process(self, request: Request) -> None:
        reconcile_id = str(uuid.uuid4())
        fields = {
            "controller": self.name,
            "namespace": request.namespace,
            "name": request.name,
            "reconcileID": reconcile_id,
        }
        logger = ReconcileLogger(self._log, fields)
        started = time.perf_counter()
        outcome = "success"
        try:
            outcome = await self._reconcile_once(request, reconcile_id, logger)
        except TerminalError as error:
            outcome = "error"
            self._metrics.reconcile_errors.labels(self.name).inc()
            self._metrics.terminal_reconcile_errors.labels(self.name).inc()
            logger.error("terminal reconcile error, not retrying: %s", error)
            self.queue.forget(request)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            outcome = "error"
            self._metrics.reconcile_errors.labels(self.name).inc()
            detail = (
                "reconcile timed out" if isinstance(error, TimeoutError) else "reconcile failed"
            )
            logger.error(
                "%s, retrying with backoff", detail, exc_info=not isinstance(error, TimeoutError)
            )
            self.queue.add_rate_limited(request)
        finally:
            self._reconcile_time.observe(time.perf_counter() - started)
            self._reconcile_total[outcome].inc()

    async def _reconcile_once(
        self, request: Request, reconcile_id: str, logger: ReconcileLogger
    ) -> str:
        obj = self.reader(request)
        if obj is None:
            # Gone from the cache: nothing to reconcile (owners and finalizers clean up).
            self.queue.forget(request)
            return "success"
        if self.admit is not None and not await self.admit(obj):
            self.queue.forget(request)
            return "success"
        ctx = Context(
            client=self.client,
            request=request,
            controller=self.name,
            reconcile_id=reconcile_id,
            log=logger,
            field_manager=self.field_manager,
            recorder=self.recorder,
            cache=self.cache,
            obj=obj,
            child_labels=self.child_labels,
        )
        timeout = self.reconciler.reconcile_timeout
        if timeout is None:  # no timer to arm: a reconcile's own cost is what this path is
            finished, result = await self._finalize_and_reconcile(ctx, obj, logger)
        else:
            async with asyncio.timeout(timeout):
                finished, result = await self._finalize_and_reconcile(ctx, obj, logger)
        if finished:
            self.queue.forget(request)
            return "success"
        if result is None:
            result = Result()
        if not isinstance(result, Result):
            raise TypeError(
                f"{type(self.reconciler).__qualname__}.reconcile must return Result or None, "
                f"got {type(result).__name__}"
            )
        if result.requeue_after:
            self.queue.forget(request)
            self.queue.add_after(request, result.requeue_after)
            return "requeue_after"
        if result.requeue:
            self.queue.add_rate_limited(request)
            return "requeue"
        self.queue.forget(request)
        return "success"

    async def _finalize_and_reconcile(
        self, ctx: Context, obj: Any, logger: ReconcileLogger
    ) -> tuple[bool, Any]:
        """The finalizer step, then ``reconcile``: ``(True, None)`` when the finalizer step
        says there is nothing to reconcile, else ``(False, what reconcile returned)``."""
        if self.reconciler.has_finalize():
            proceed, obj = await self._handle_finalizer(ctx, obj, logger)
            if not proceed:
                return True, None
            ctx.obj = obj
        return False, await self.reconciler.reconcile(ctx, obj)

    async def _handle_finalizer(
        self, ctx: Context, obj: Any, logger: ReconcileLogger
    ) -> tuple[bool, Any]:
        """Add the finalizer, or run ``finalize`` and remove it. Returns (reconcile?, object)."""
        finalizer = self.reconciler.finalizer_name()
        finalizers: list[str] = list(obj.metadata.finalizers)
        if obj.metadata.deletion_timestamp is None:
            if finalizer in finalizers:
                return True, obj
            updated = await self._set_finalizers(obj, [*finalizers, finalizer])
            logger.info("added finalizer %s", finalizer)
            return True, updated
        if finalizer not in finalizers:
            return False, obj  # being deleted and already finalized by us
        await self.reconciler.finalize(ctx, obj)
        # NotFound: ours was the last finalizer and the object is gone already.
        with contextlib.suppress(NotFound):
            await self._set_finalizers(obj, [f for f in finalizers if f != finalizer])
        logger.info("finalized; removed finalizer %s", finalizer)
        return False, obj

    async def _set_finalizers(self, obj: Any, finalizers: list[str]) -> Any:
        # The resourceVersion makes this fail with Conflict rather than drop a finalizer someone
        # else added meanwhile; the retry then works from the newer object.
        patch = {
            "metadata": {
                "finalizers": finalizers,
                "resourceVersion": obj.metadata.resource_version,
            }
        }
        return await self.client.patch(
            self.kind, obj.metadata.name, patch, namespace=obj.metadata.namespace
        )
