"""``Informer``: a list + watch loop that keeps a ``Store`` equal to the apiserver, forever.

The loop, as client-go's reflector runs it::

    list (pages of 500) ──▶ replace store, emit add/update/delete ──▶ watch from list's RV
          ▲                                                              │
          │ 410 Gone (RV compacted away)                                 │ events → store →
          └──────────────────────────────────────────────────────────────┤ handlers; bookmarks
                                                                         │ advance the RV
                 server timeout (5-10 min, randomised): watch again ◀────┤
                 connection lost / idle timeout: back off 0.8..30 s ◀────┘ and watch from RV

The failure operators suffer from most, a watch that silently stops, cannot persist here. Each
watch asks for bookmarks, which the apiserver sends about once a minute once its watch cache
has progressed, so a healthy watch is seldom silent for long; one silent for the idle timeout
(``Timeouts.watch_idle``, 90 s by default) is most likely a dead connection (a blackholed path,
an expired NAT entry), or a quiet resource the apiserver sent no bookmark for. Either way it is
dropped, logged, and watched again from the last resourceVersion: nothing is missed and
nothing is relisted unless that version is gone (410). Nothing but ``stop()`` ends
the loop; errors are logged, counted and retried with backoff, never sooner than a
``Retry-After`` the server asked for.

Nor can one stored object the informer's type refuses stop it (a "poison" object: a CRD laxer
than the model). It is kept out of the store, reported once per resourceVersion (see
:mod:`.invalid_objects`) and skipped; every other object syncs as usual. If the store held a
valid older version, that version is removed and handlers see a delete, as when an object
stops matching the informer's label selector: the object left what this informer can
represent, and a cache entry that stays at an old version while the server has moved on would
be a lie the reconciler acts on. A later version that validates enters as an add.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

from crdkit._lifecycle import StartStop
from crdkit.client.codec import (
    Codec,
    DictCodec,
    InvalidObject,
    RawListPage,
    codec_for,
    key_and_version,
    paused_gc,
)
from crdkit.client.discovery import GroupVersionKind
from crdkit.client.errors import (
    ApiError,
    BadRequest,
    DecodeError,
    Forbidden,
    Gone,
    Invalid,
    KubernetesError,
    RequestTimeout,
    WatchIdle,
)
from crdkit.client.objects import object_key, resource_version_of
from crdkit.client.retry import Backoff
from crdkit.client.watch import ADDED, BOOKMARK, DELETED, MODIFIED, WatchEvent
from crdkit.resources import PartialObjectMetadata
from crdkit.runtime.informer_handlers import (
    AddHandler,
    DeleteHandler,
    EventOrigin,
    HandlerRegistration,
    UpdateHandler,
)
from crdkit.runtime.invalid_objects import InvalidObjects
from crdkit.runtime.store import IndexFunc, Store

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping

    from prometheus_client import CollectorRegistry

    from crdkit.client.client import Client, ResolvedResource
    from crdkit.resources import KubernetesObject
    from crdkit.runtime.events import EventRecorder

__all__ = ["Backoff", "Informer", "strip_managed_fields"]

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_RESYNC = 10 * 3600.0
DEFAULT_PAGE_SIZE = 500
FORBIDDEN_LOG_INTERVAL = 30.0
"""Seconds between repeats of the same 403 warning (a new message is logged at once)."""


def strip_managed_fields(obj: T) -> T:
    """Drop ``metadata.managedFields`` (an informer ``transform``).

    Server-side apply's field ownership is computed by the apiserver; a controller reading
    from its cache never needs it, and it is often a third of an object's JSON.
    """
    if isinstance(obj, dict):
        metadata = obj.get("metadata")
        if isinstance(metadata, dict):
            metadata.pop("managedFields", None)
        return obj
    metadata = getattr(obj, "metadata", None)
    if metadata is not None and getattr(metadata, "managed_fields", None) is not None:
        metadata.managed_fields = None
    return obj


class Informer(StartStop, Generic[T]):
    """Keeps ``store`` in sync with one kind (in one namespace, matching selectors).

    Create it with a resource class (objects of that class), a ``GroupVersionKind`` (dicts),
    or with :meth:`for_metadata` (``PartialObjectMetadata`` only). ``start()`` launches the
    loop; ``wait_for_sync()`` returns once the first list is in the store.

    The store is compact (JSON bytes, a fresh object per read; see :mod:`.store`) unless
    ``compact=False``, which keeps decoded objects: faster reads, several times the memory.
    ``transform`` rewrites every object before it is stored or handed to handlers (client-go's
    ``SetTransform``), e.g. :func:`strip_managed_fields` to keep what the operator never reads
    out of the cache.

    ``watch_list`` starts it from a streamed list (client-go's WatchList): one watch with
    ``sendInitialEvents`` brings every object as an event, ends them with a bookmark, and goes
    on with the changes, so neither side holds the whole list at once. An apiserver that
    refuses it (``Invalid``/``BadRequest``) is listed and watched instead, from then on.

    ``watch_timeout`` is the range the server timeout of each watch is drawn from (5-10 min);
    ``idle_timeout`` is how long a watch may be silent before it counts as dead (default:
    the client's ``Timeouts.watch_idle``, 90 s, a little above the bookmark interval).

    An object the type refuses is kept out of the store (``invalid`` lists them), logged and
    counted in ``registry`` (default: the process-wide one) once per resourceVersion, and
    recorded as a Warning Event ``InvalidObject`` on it when ``event_recorder`` is given (a
    ``Manager`` gives its informers one).
    """

    def __init__(
        self,
        client: Client,
        resource: type[T] | GroupVersionKind,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        indexers: Mapping[str, IndexFunc[T]] | None = None,
        resync_period: float | None = DEFAULT_RESYNC,
        page_size: int = DEFAULT_PAGE_SIZE,
        watch_timeout: tuple[int, int] = (300, 600),
        idle_timeout: float | None = None,
        backoff: Backoff | None = None,
        compact: bool = True,
        transform: Callable[[T], T] | None = None,
        event_recorder: EventRecorder | None = None,
        registry: CollectorRegistry | None = None,
        watch_list: bool = False,
        _metadata_only: bool = False,
    ) -> None:
        if resync_period is not None and resync_period <= 0:
            raise ValueError(f"resync_period must be positive or None, got {resync_period}")
        low, high = watch_timeout
        if not 0 < low <= high:
            raise ValueError(f"watch_timeout must be (low, high) with 0 < low <= high, got {low}")
        if idle_timeout is not None and idle_timeout <= 0:
            raise ValueError(f"idle_timeout must be positive or None, got {idle_timeout}")
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.metadata_only = _metadata_only
        self.resync_period = resync_period
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.idle_timeout = idle_timeout
        self.backoff = backoff or Backoff()
        self.transform = transform
        codec: Codec[Any]
        if _metadata_only:
            codec = codec_for(PartialObjectMetadata)
        elif isinstance(resource, GroupVersionKind):
            codec = DictCodec()
        else:
            codec = codec_for(resource)
        self.store: Store[T] = Store(indexers, codec=cast("Codec[T]", codec) if compact else None)
        self._handlers: list[HandlerRegistration[T]] = []
        self._target: ResolvedResource[T] | None = None
        self._resource_version: str | None = None
        self._synced = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._running = False
        #: How many times the loop listed (1 + relists after 410 or errors), for observability.
        self.list_count = 0
        #: How many watch connections were opened.
        self.watch_count = 0
        self.watch_list = watch_list
        #: How many of the lists were streamed (``watch_list``).
        self.stream_count = 0
        self._stream_refused = False
        #: The last error the loop recovered from, if any (the manager's cache-sync timeout
        #: names it: often a 403 that says which right the role lacks).
        self.last_error: BaseException | None = None
        self._forbidden_logged: tuple[str, float] | None = None  # (message, loop time)
        self._invalid = InvalidObjects(self.description, recorder=event_recorder, registry=registry)

    @classmethod
    def for_metadata(
        cls,
        client: Client,
        resource: type[KubernetesObject] | GroupVersionKind,
        **options: Any,
    ) -> Informer[PartialObjectMetadata]:
        """An informer of ``PartialObjectMetadata``: names, labels, owners; no spec or status.

        For kinds watched only to map them to their owners; a cache of metadata stays small.
        """
        informer: Informer[PartialObjectMetadata] = Informer(
            client,
            resource,  # type: ignore[arg-type]
            _metadata_only=True,
            **options,
        )
        return informer

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._running

    @property
    def has_synced(self) -> bool:
        """True once the first full list is in the store."""
        return self._synced.is_set()

    @property
    def resource_version(self) -> str | None:
        """The resourceVersion the next watch starts from (``None``: the next step is a list)."""
        return self._resource_version

    @property
    def event_recorder(self) -> EventRecorder | None:
        """What records the Warning Events about refused objects (``None``: only logged)."""
        return self._invalid.recorder

    @property
    def invalid(self) -> dict[str, InvalidObject]:
        """The objects kept out of the store because the type refuses them, by key (a copy)."""
        return self._invalid.snapshot()

    async def start(self) -> None:
        """Start the list/watch loop and the handlers' delivery (idempotent)."""
        if self._running:
            return
        self._running = True
        for handler in self._handlers:
            handler.start()
        await self._invalid.start()
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._run(), name=f"informer {self.description}")]
        if self.resync_period is not None:
            self._tasks.append(loop.create_task(self._resync_loop()))

    async def stop(self) -> None:
        """Stop the loop and the handlers; the store keeps its last contents."""
        self._running = False
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._invalid.stop()
        for handler in self._handlers:
            await handler.stop()

    async def wait_for_sync(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Wait for the first list to be stored; ``False`` if ``timeout`` passed first."""
        if not self._running and not self.has_synced:
            raise RuntimeError("the informer is not started")
        try:
            async with asyncio.timeout(timeout):
                await self._synced.wait()
        except TimeoutError:
            return False
        return True

    async def drain(self) -> None:
        """Wait until every handler has processed every notification queued so far."""
        for handler in list(self._handlers):
            await handler.drained()

    def reselect(self, label_selector: str | None) -> None:
        """Follow the objects ``label_selector`` selects from now on (a shard taking over a
        dead shard's objects, then letting their old label go).

        A running informer lists again at once, into the same store: what both selectors
        select stays (announced only if it changed), what only the old one selected is
        deleted (with its delete event), what only the new one selects is added. The store
        and the handlers go on meanwhile; ``has_synced`` stays true. (An informer shared
        through a factory keeps the key it was made under.)
        """
        if label_selector == self.label_selector:
            return
        self.label_selector = label_selector or None
        self._resource_version = None  # the next step of the loop is a list
        if self._running and self._tasks:
            old, *others = self._tasks  # the loop first, then the resync loop
            old.cancel()
            loop = asyncio.get_running_loop()
            new = loop.create_task(self._run(), name=f"informer {self.description}")
            # The cancelled loop stays listed, so that stop() waits for its end.
            self._tasks = [new, *others, old]

    @property
    def description(self) -> str:
        name = getattr(self.resource, "__name__", None) or getattr(self.resource, "kind", "?")
        parts = [str(name)]
        if self.metadata_only:
            parts.append("metadata")
        if self.namespace:
            parts.append(f"ns={self.namespace}")
        if self.label_selector:
            parts.append(f"labels={self.label_selector}")
        if self.field_selector:
            parts.append(f"fields={self.field_selector}")
        return " ".join(parts)

    # -- handlers --------------------------------------------------------------------------

    def add_event_handler(
        self,
        on_add: AddHandler[T] | None = None,
        on_update: UpdateHandler[T] | None = None,
        on_delete: DeleteHandler[T] | None = None,
        *,
        reads_old: bool = True,
    ) -> HandlerRegistration[T]:
        """Register callbacks (functions or coroutines); each registration runs on its own.

        A handler added after objects are stored first gets an add for each of them, so it
        sees the same world as one registered before the start.

        ``reads_old=False`` says ``on_update`` never looks at its first argument (a handler
        that only queues the new object's key). A compact store keeps JSON, so the previous
        version costs a decode on every change; when no registration reads it, it is not
        decoded, and ``on_update`` gets the new version in both places.
        """
        registration = HandlerRegistration(on_add, on_update, on_delete, reads_old=reads_old)
        self._handlers.append(registration)
        for obj in self.store.list():
            registration.add(obj, "initial-list")
        if self._running:
            registration.start()
        return registration

    async def remove_event_handler(self, registration: HandlerRegistration[T]) -> None:
        if registration in self._handlers:
            self._handlers.remove(registration)
            await registration.stop()

    def _update_wants(self) -> tuple[bool, bool]:
        """Whether any registration takes updates, and whether any of those reads the old
        version (only then is it decoded from a compact store)."""
        updates = reads_old = False
        for handler in self._handlers:
            if handler.on_update is not None:
                updates = True
                reads_old = reads_old or handler.reads_old
        return updates, reads_old

    def _emit_add(self, obj: T, origin: EventOrigin = "change") -> None:
        for handler in self._handlers:
            handler.add(obj, origin)

    def _emit_update(self, old: T, new: T, origin: EventOrigin = "change") -> None:
        for handler in self._handlers:
            handler.update(old, new, origin)

    def _emit_delete(self, obj: T) -> None:
        for handler in self._handlers:
            handler.delete(obj)

    # -- the loop --------------------------------------------------------------------------

    async def _resolve(self) -> ResolvedResource[T]:
        if self._target is None:
            resolved: Any = await self.client.resolve(
                self.resource,  # type: ignore[arg-type]
                metadata_only=self.metadata_only,
            )
            self._target = resolved
            self._invalid.identify(resolved.info)
        return self._target

    async def _run(self) -> None:
        while True:
            try:
                target = await self._resolve()
                if self._resource_version is None:
                    if self.watch_list and not self._stream_refused:
                        await self._stream(target)  # the list, then the watch goes on
                        continue
                    await self._list(target)
                    self.backoff.reset()
                await self._watch(target)
            except asyncio.CancelledError:
                raise
            except Gone as exc:
                # The RV we hold is older than etcd's history: only a fresh list can tell
                # what changed meanwhile.
                log.info("informer %s: %s; relisting", self.description, exc.message)
                self.last_error = exc
                if self._resource_version is None:  # the list itself failed: do not spin
                    await asyncio.sleep(self.backoff.next())
                self._resource_version = None
            except Forbidden as exc:
                self.last_error = exc
                delay = self.backoff.next()
                self._log_forbidden(exc, delay)
                await asyncio.sleep(delay)
            except WatchIdle as exc:
                # Usually a quiet kind (Nodes, PDBs) whose watch cache had nothing newer to
                # bookmark; a dead connection is resumed the same way. Either is routine, so it
                # is said at DEBUG: a line every 90 s of quiet would only teach users to ignore
                # the log (last_error and the metrics still show it).
                self.last_error = exc
                delay = self.backoff.next()
                log.debug("informer %s: %s; resuming in %.1fs", self.description, exc, delay)
                await asyncio.sleep(delay)
            except KubernetesError as exc:
                self.last_error = exc
                delay = self.backoff.next()
                if isinstance(exc, ApiError) and exc.retry_after is not None:
                    # The server said when to come back (the transport's own retries ran
                    # out): not sooner than that.
                    delay = max(delay, exc.retry_after)
                log.warning("informer %s: %s; retrying in %.1fs", self.description, exc, delay)
                await asyncio.sleep(delay)
            except Exception as exc:
                self.last_error = exc
                delay = self.backoff.next()
                log.exception("informer %s failed; retrying in %.1fs", self.description, delay)
                await asyncio.sleep(delay)

    def _log_forbidden(self, exc: Forbidden, delay: float) -> None:
        """A 403 will not fix itself: say which right is missing and where to look, once per
        distinct message and then every ``FORBIDDEN_LOG_INTERVAL`` seconds, not on every retry.
        """
        verb = "list" if self._resource_version is None else "watch"
        resource = self._target.info.plural if self._target is not None else self.description
        group = self._target.info.group if self._target is not None else "?"
        where = f"namespace {self.namespace}" if self.namespace else "all namespaces"
        message = str(exc)
        now = asyncio.get_running_loop().time()
        last = self._forbidden_logged
        if last is not None and last[0] == message and now - last[1] < FORBIDDEN_LOG_INTERVAL:
            log.debug("informer %s: still forbidden; retrying in %.1fs", self.description, delay)
            return
        self._forbidden_logged = (message, now)
        log.warning(
            'informer %s: forbidden to %s %s (group "%s") in %s: %s; check the operator\'s role '
            "(crdkit gen-rbac ... --check ROLE.yaml); retrying in %.1fs",
            self.description,
            verb,
            resource,
            group,
            where,
            message,
            delay,
            extra={
                "fields": {
                    "resource": resource,
                    "group": group,
                    "namespace": self.namespace,
                    "verb": verb,
                }
            },
        )

    async def _list(self, target: ResolvedResource[T]) -> None:
        """List page by page into the store, then drop what the list no longer has.

        Each page is stored (and its objects handed to handlers) as it arrives, so the whole
        list never exists as objects at once; the store holds its JSON. Unchanged objects
        (same resourceVersion) are not re-announced after a relist.
        """
        seen: set[str] = set()
        refused: set[str] = set()
        added = updated = 0
        version = ""
        async for page in self.client.list_raw_pages(
            target,
            namespace=self.namespace,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            page_size=self.page_size,
        ):
            # One collector pause for decoding and storing the page: its objects are freed
            # (unless a handler holds them) before the collector could scan them.
            with paused_gc():
                version, stored, changed = self._store_page(target.codec, page, seen, refused)
            del page
            added += stored
            updated += changed
        self._finish_list(seen, refused, version, added, updated, "listed")

    def _finish_list(
        self, seen: set[str], refused: set[str], version: str, added: int, updated: int, how: str
    ) -> None:
        """After a whole list (paged or streamed): drop what it no longer has, and sync."""
        store = self.store
        wants_gone = any(h.on_delete is not None for h in self._handlers)
        listed_before = store.keys()
        vanished = [key for key in listed_before if key not in seen]
        for key in vanished:
            gone = store.delete(key, return_old=wants_gone)
            if gone is not None:
                self._emit_delete(gone)
        self._invalid.retain(refused)  # the ones deleted meanwhile are forgotten
        self.list_count += 1
        self._resource_version = version
        self._synced.set()
        log.debug(
            "informer %s: %s %d objects at RV %s (+%d ~%d -%d)",
            self.description,
            how,
            len(seen),
            version,
            added,
            updated,
            len(vanished),
        )

    def _store_page(
        self,
        codec: Codec[T],
        page: RawListPage,
        seen: set[str],
        refused: set[str],
    ) -> tuple[str, int, int]:
        """Decode one list page into the store; ``(resourceVersion, added, updated)``.

        A compact store keeps each item's JSON as the server sent it, so no object is
        serialised again (unless a ``transform`` changed it). Items are decoded one at a
        time: an object no handler holds is freed before the next is built. On a relist,
        an item the store holds at the same resourceVersion is neither announced nor
        stored, so it is not decoded either: its key and version are read from its JSON
        (a fraction of a decode); nor is one already refused at the same version. An item
        the type refuses is kept out (its key goes to ``refused``, not ``seen``). A function
        of its own so that all of it runs inside the caller's collector pause.
        """
        store = self.store
        invalid = self._invalid
        added = updated = 0
        # Without a transform the key read from the JSON is the stored object's key.
        any_refused = len(invalid) > 0  # then a valid item may be one fixed: look it up
        peek = self.transform is None and (len(store) > 0 or any_refused)
        for index, raw in enumerate(page.items):
            if peek:
                identity = key_and_version(raw)
                if identity is not None:
                    key, current = identity
                    if current is not None and key in store and current == store.version_of(key):
                        seen.add(key)
                        continue
                    if any_refused and invalid.is_reported(key, current):
                        refused.add(key)
                        continue
            obj = codec.try_decode(raw)
            if isinstance(obj, InvalidObject):
                refused.add(self._refuse(obj, f"list item {index}"))
                continue
            taken = self._take_listed(obj, raw, seen, forget_refused=any_refused)
            added += taken == "added"
            updated += taken == "updated"
        return page.resource_version, added, updated

    def _take_listed(
        self, obj: T, raw: bytes | None, seen: set[str], *, forget_refused: bool
    ) -> Literal["added", "updated"] | None:
        """One object of a list (paged or streamed) into the store, announced if it is new
        or changed; what it did."""
        store = self.store
        if self.transform is not None:
            obj = self.transform(obj)
            raw = None  # the server's bytes are no longer this object
        key = object_key(obj)
        seen.add(key)
        if forget_refused:
            self._invalid.forget(key)  # fixed, if it was refused
        if key not in store:
            store.upsert(obj, raw)
            # The first list is the initial list; a relist's new objects are changes.
            self._emit_add(obj, "change" if self.list_count else "initial-list")
            return "added"
        current = resource_version_of(obj)
        if current is None or current != store.version_of(key):
            updates, reads_old = self._update_wants()
            old = store.upsert(obj, raw, return_old=reads_old)
            if updates:
                self._emit_update(obj if old is None else old, obj)
            return "updated"
        return None

    async def _stream(self, target: ResolvedResource[T]) -> None:
        """A streamed list (``sendInitialEvents``): the initial events into the store as a
        list's items, then, from the bookmark that ends them, the same stream as a watch."""
        seen: set[str] = set()
        refused: set[str] = set()
        added = updated = 0
        synced = False
        forget = len(self._invalid) > 0
        started = time.monotonic()
        try:
            async for event in self._events(target, send_initial_events=True):
                if synced:
                    self._apply_event(event)
                elif event.initial_events_end:
                    self.stream_count += 1
                    version = event.resource_version or ""
                    self._finish_list(seen, refused, version, added, updated, "streamed")
                    self.backoff.reset()
                    synced = True
                elif event.invalid is not None:
                    refused.add(self._refuse(event.invalid, "initial watch event"))
                elif event.type == ADDED and event.object is not None:
                    taken = self._take_listed(event.object, event.raw, seen, forget_refused=forget)
                    added += taken == "added"
                    updated += taken == "updated"
        except (Invalid, BadRequest) as exc:
            if synced:
                raise
            # This apiserver does not stream lists (WatchList off, or too old): list instead.
            log.info("informer %s: no streamed list (%s); listing", self.description, exc)
            self._stream_refused = True
            return
        except RequestTimeout:
            if synced and time.monotonic() - started > 1.0:
                self.backoff.reset()
            raise
        if not synced:
            # The stream ended before its initial events did: start over, backed off.
            self._resource_version = None
            await asyncio.sleep(self.backoff.next())

    def _events(
        self, target: ResolvedResource[T], *, send_initial_events: bool = False
    ) -> AsyncIterator[WatchEvent[T]]:
        """One watch connection (counted): from the held resourceVersion, or with
        ``send_initial_events`` from a streamed list."""
        self.watch_count += 1
        return self.client.watch_resolved(
            target,
            namespace=self.namespace,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            resource_version=None if send_initial_events else self._resource_version,
            timeout_seconds=random.randint(*self.watch_timeout),
            idle_timeout=self.idle_timeout,
            lenient=True,
            send_initial_events=send_initial_events,
        )

    def _apply_event(self, event: WatchEvent[T]) -> None:
        if event.invalid is not None:
            self._apply_invalid(event.type, event.invalid)
        else:
            self._apply(event.type, event.object, event.raw)
        if event.resource_version:
            self._resource_version = event.resource_version

    async def _watch(self, target: ResolvedResource[T]) -> None:
        started = time.monotonic()
        try:
            async for event in self._events(target):
                self._apply_event(event)
                if time.monotonic() - started > 1.0:
                    self.backoff.reset()  # the connection works: the next failure starts small
        except RequestTimeout:
            if time.monotonic() - started > 1.0:
                # A timeout is paced by its own length: backing off more on top would only
                # stretch the gaps of a quiet watch on an apiserver that sends no bookmarks
                # (its watch cache off), reconnected after every idle timeout, to 30 s.
                self.backoff.reset()
            raise
        if time.monotonic() - started < 1.0:
            # The server ended the watch at once (an apiserver shutting down, a proxy that
            # cuts streams): do not hammer it with immediate reconnects.
            await asyncio.sleep(self.backoff.next())
        else:
            self.backoff.reset()

    def _apply(self, kind: str, obj: T | None, raw: bytes | None) -> None:
        if kind == BOOKMARK or obj is None:
            return
        if self.transform is not None:
            obj = self.transform(obj)
            raw = None  # the server's bytes are no longer this object
        if kind in (ADDED, MODIFIED):
            key = object_key(obj)
            if key in self._invalid:
                self._invalid.forget(key)  # fixed: it enters the store as an add
            existed = key in self.store
            # Decoding the previous version costs a validation in a compact store: only
            # pay it when some handler reads it.
            updates, reads_old = self._update_wants() if existed else (False, False)
            old = self.store.upsert(obj, raw, return_old=reads_old)
            if not existed:
                self._emit_add(obj)
            elif updates:
                self._emit_update(obj if old is None else old, obj)
        elif kind == DELETED:
            key = object_key(obj)
            self._invalid.forget(key)
            self.store.delete(key, return_old=False)
            self._emit_delete(obj)  # the final state the server sent
        else:
            log.warning("informer %s: ignoring watch event of type %r", self.description, kind)

    def _apply_invalid(self, kind: str, invalid: InvalidObject) -> None:
        """A watch event whose object the type refuses."""
        if kind in (ADDED, MODIFIED):
            self._refuse(invalid, "watch event")
        elif kind == DELETED:
            key = invalid.key
            assert key is not None  # the parser yields only objects it could key
            self._invalid.forget(key)
            # Normally absent (refused before); only a valid version in the store is announced.
            gone = self.store.delete(key, return_old=True)
            if gone is not None:
                self._emit_delete(gone)
        else:
            log.warning("informer %s: ignoring watch event of type %r", self.description, kind)

    def _refuse(self, invalid: InvalidObject, where: str) -> str:
        """Keep ``invalid`` out of the store and report it; its key.

        A valid older version in the store is removed and announced as deleted (see the
        module docstring): handlers, and so reconcilers, never see the refused version, and
        nobody reads a version the server no longer has.
        """
        key = invalid.key
        if key is None:  # not even metadata.name: nothing to keep it out under
            raise DecodeError(f"{where}: {invalid.error()}")
        gone = self.store.delete(key, return_old=True)
        if gone is not None:
            self._emit_delete(gone)
        self._invalid.refuse(invalid)
        return key

    async def _resync_loop(self) -> None:
        """Every resync period (±10 %), replay every stored object as an update.

        Level-triggered controllers use it to re-check the world even when nothing changed
        (an external system drifted, a reconcile was lost).
        """
        assert self.resync_period is not None
        while True:
            await asyncio.sleep(self.resync_period * random.uniform(0.9, 1.1))
            if self.has_synced:
                for obj in self.store.list():
                    self._emit_update(obj, obj, "resync")
