"""The state and rules of the in-memory apiserver behind :class:`~crdkit.testing.FakeCluster`.

Objects are JSON dicts keyed by kind, namespace and name. One counter gives every write its
``resourceVersion`` (as etcd's revision does), and every write is kept as a watch event, so a
watch from any version the history still holds replays what happened since. The rules are the
apiserver's, measured on the local control plane (tests/integration/testing/): optimistic
concurrency, ``generation``, the status subresource, finalizers and ``deletionTimestamp``,
delete preconditions, and a garbage collector for owner references (which envtest lacks and a
real cluster's controller-manager runs).

Errors are raised as the :mod:`crdkit.client.errors` exception the real apiserver's ``Status``
would become, built from the same ``Status`` dict (so ``reason``, ``code`` and ``details``
read the same).
"""

from __future__ import annotations

import copy
import random
import uuid
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from crdkit.testing.fake.defaults import on_create
from crdkit.testing.fake.errors import (
    STALE,
    bad_request,
    binding_conflict,
    conflict,
    invalid,
    not_found,
    precondition_failed,
    status_error,
)
from crdkit.testing.fake.patch import applied_paths, merge_applied, remove_path

if TYPE_CHECKING:
    from collections.abc import Callable

    from crdkit.testing.fake.kinds import FakeKind
    from crdkit.testing.fake.select import Selection

__all__ = ["FakeApiServer", "Stored", "WatchRecord"]

Obj = dict[str, Any]
Key = tuple[str, str, str, str | None, str]  # group, version, plural, namespace, name

_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # as the apiserver's name generator
_FOREGROUND = "foregroundDeletion"
# Server-set fields a seeded object may bring (a starting state the API could have reached).
_SEEDABLE = (
    "uid",
    "creationTimestamp",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
_ORPHAN = "orphan"
# A DELETE's preconditions as the apiserver checks them, in its order: the metadata field,
# its name in the message, and what a mismatch most likely means.
_DELETE_PRECONDITIONS = (
    ("uid", "UID", "deleted and then recreated"),
    ("resourceVersion", "ResourceVersion", "modified"),
)


@dataclass
class Stored:
    """One object in the store, with the kind that says how it behaves."""

    kind: FakeKind
    obj: Obj
    # What each server-side apply manager (and subresource) applied last: the fields it owns.
    applied: dict[str, frozenset[tuple[str, ...]]] = field(default_factory=dict)


@dataclass(frozen=True)
class WatchRecord:
    """One write as a watch sees it: the event type, the object after it (before, if deleted)
    and, for MODIFIED, the object before (a selector watch turns it into ADDED/DELETED)."""

    revision: int
    type: str
    kind: FakeKind
    obj: Obj
    previous: Obj | None = None


def _meta(obj: Obj) -> dict[str, Any]:
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
        obj["metadata"] = metadata
    return metadata


def _tidy(metadata: dict[str, Any]) -> None:
    """Drop empty metadata collections: Go's encoding omits them, so the apiserver never
    stores ``labels: {}`` or ``finalizers: []``."""
    for name in ("labels", "annotations", "finalizers", "ownerReferences"):
        if name in metadata and not metadata[name]:
            del metadata[name]


def _now_text(clock: Callable[[], datetime]) -> str:
    return clock().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _spec_part(obj: Obj, kind: FakeKind) -> Obj:
    """What ``generation`` counts changes of: all but metadata (and status, a subresource)."""
    skip = {"metadata", "status"} if kind.status_subresource else {"metadata"}
    return {k: v for k, v in obj.items() if k not in skip}


class FakeApiServer:
    """Objects, the global resourceVersion, the write history, and the apiserver's rules.

    ``history`` bounds how many writes a watch can replay; older versions answer 410 Gone,
    as after an etcd compaction (``compact`` forces one).
    """

    def __init__(self, *, clock: Callable[[], datetime], history: int = 10_000) -> None:
        self._clock = clock
        self._objects: dict[Key, Stored] = {}
        self._revision = 0
        self._history: deque[WatchRecord] = deque()
        self._history_limit = history
        self._oldest = 1  # the oldest revision a watch may start after
        self._listeners: list[Callable[[WatchRecord], None]] = []
        self._random = random.Random(0)
        self._collecting = False  # the collector's deletes must not start it again
        self._gone: set[str] = set()  # the uids of every object removed

    # -- bookkeeping -----------------------------------------------------------------------

    @property
    def revision(self) -> int:
        """The resourceVersion of the latest write (what a list answers with)."""
        return self._revision

    def subscribe(self, listener: Callable[[WatchRecord], None]) -> Callable[[], None]:
        """Call ``listener`` with every write from now on; returns the unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def compact(self) -> None:
        """Forget the write history: watches from any version before now get 410 Gone."""
        self._history.clear()
        self._oldest = self._revision

    def _record(self, type_: str, kind: FakeKind, obj: Obj, previous: Obj | None = None) -> None:
        record = WatchRecord(self._revision, type_, kind, copy.deepcopy(obj), previous)
        self._history.append(record)
        if len(self._history) > self._history_limit:
            dropped = self._history.popleft()
            self._oldest = dropped.revision
        for listener in list(self._listeners):
            listener(record)

    def _next_revision(self) -> str:
        self._revision += 1
        return str(self._revision)

    def events_since(self, revision: int) -> list[WatchRecord]:
        """The writes after ``revision``; 410 Gone if the history no longer reaches back."""
        if revision < self._oldest and revision < self._revision:
            raise status_error(
                410,
                "Expired",
                f"too old resource version: {revision} ({self._oldest})",
            )
        return [record for record in self._history if record.revision > revision]

    @staticmethod
    def _key(kind: FakeKind, namespace: str | None, name: str) -> Key:
        info = kind.info
        return (info.group, info.version, info.plural, namespace, name)

    def _stored(self, kind: FakeKind, namespace: str | None, name: str) -> Stored:
        stored = self._objects.get(self._key(kind, namespace, name))
        if stored is None:
            raise not_found(kind, name)
        return stored

    # -- reads -----------------------------------------------------------------------------

    def get(self, kind: FakeKind, namespace: str | None, name: str) -> Obj:
        return copy.deepcopy(self._stored(kind, namespace, name).obj)

    def list_objects(
        self, kind: FakeKind, namespace: str | None, selection: Selection
    ) -> list[Obj]:
        """Matching objects in etcd's key order (namespace, then name)."""
        info = kind.info
        found = [
            (key, stored.obj)
            for key, stored in self._objects.items()
            if key[:3] == (info.group, info.version, info.plural)
            and (namespace is None or key[3] == namespace)
            and selection.matches(stored.obj)
        ]
        found.sort(key=lambda item: (item[0][3] or "", item[0][4]))
        return [copy.deepcopy(obj) for _, obj in found]

    # -- writes ----------------------------------------------------------------------------

    def _generated_name(self, prefix: str) -> str:
        suffix = "".join(self._random.choice(_GENERATE_ALPHABET) for _ in range(5))
        return prefix + suffix

    def create(self, kind: FakeKind, namespace: str | None, obj: Obj, *, seed: bool = False) -> Obj:
        """POST. With ``seed`` (a test's starting state, not an API call) the object keeps the
        ``uid``, ``creationTimestamp``, ``generation``, ``status`` and, while finalizers hold
        it, ``deletionTimestamp`` it was given, so a test can start from any state."""
        obj = copy.deepcopy(obj)
        metadata = _meta(obj)
        info = kind.info
        obj["apiVersion"], obj["kind"] = info.api_version, info.kind
        name = metadata.get("name")
        if not name:
            prefix = metadata.get("generateName")
            if not prefix:
                raise invalid(
                    kind, "", "metadata.name", "Required value: name or generateName is required"
                )
            name = self._generated_name(prefix)
            while self._key(kind, namespace, name) in self._objects:
                name = self._generated_name(prefix)
            metadata["name"] = name
        if info.namespaced:
            if metadata.get("namespace") not in (None, "", namespace):
                raise bad_request(
                    "the namespace of the provided object does not match the namespace sent "
                    "on the request"
                )
            metadata["namespace"] = namespace
        else:
            metadata.pop("namespace", None)
        key = self._key(kind, namespace, name)
        if key in self._objects:
            raise status_error(
                409,
                "AlreadyExists",
                f'{kind.qualified_resource} "{name}" already exists',
                kind,
                name,
            )
        given = {k: metadata[k] for k in _SEEDABLE if metadata.get(k) is not None} if seed else {}
        if given.get("deletionTimestamp") and not metadata.get("finalizers"):
            raise ValueError(
                f"objects: {info.kind} {name!r} has metadata.deletionTimestamp but no "
                "finalizers: the apiserver would have deleted it"
            )
        for server_field in (*_SEEDABLE, "managedFields", "selfLink"):
            metadata.pop(server_field, None)
        _tidy(metadata)
        metadata["uid"] = str(uuid.uuid4())
        metadata["creationTimestamp"] = _now_text(self._clock)
        if kind.tracks_generation:
            metadata["generation"] = 1
        if given.get("deletionTimestamp"):
            metadata.setdefault("deletionGracePeriodSeconds", 0)
        metadata.update(given)
        seeded_status = seed and obj.get("status") is not None
        if not kind.has_status:
            obj.pop("status", None)
        if kind.status_subresource and not seeded_status:
            obj.pop("status", None)  # the main resource never writes status
        if not seeded_status:
            on_create(info.group, info.kind, obj)
        metadata["resourceVersion"] = self._next_revision()
        self._objects[key] = Stored(kind, obj)
        self._record("ADDED", kind, obj)
        answer = copy.deepcopy(obj)
        if not seed:
            self._collect_if_owners_gone(key)
        return answer

    def update(
        self,
        kind: FakeKind,
        namespace: str | None,
        name: str,
        obj: Obj,
        *,
        subresource: str | None = None,
    ) -> Obj:
        """PUT (and the last step of every patch): ``obj`` replaces the stored object."""
        stored = self._stored(kind, namespace, name)
        old = stored.obj
        new = copy.deepcopy(obj)
        metadata = _meta(new)
        old_meta = old["metadata"]
        if metadata.get("name") not in (None, name):
            raise bad_request(
                f"the name of the object ({metadata.get('name')}) does not match the name on "
                f"the URL ({name})"
            )
        if metadata.get("namespace") not in (None, "", namespace):
            raise bad_request(
                "the namespace of the provided object does not match the namespace sent on "
                "the request"
            )
        version = metadata.get("resourceVersion")
        if version in (None, ""):
            if not kind.unconditional_update:
                raise invalid(
                    kind,
                    name,
                    "metadata.resourceVersion",
                    "Invalid value: 0x0: must be specified for an update",
                    by_resource=True,
                )
        elif version != old_meta["resourceVersion"]:
            raise conflict(kind, name, STALE)
        if metadata.get("uid") not in (None, "", old_meta["uid"]):
            raise conflict(
                kind,
                name,
                f"Precondition failed: UID in precondition: {metadata['uid']}, UID in object "
                f"meta: {old_meta['uid']}",
            )
        if subresource == "status":
            # Only status changes through the status subresource; the rest stays as stored.
            status = new.get("status")
            new = copy.deepcopy(old)
            metadata = new["metadata"]
            if status is None:
                new.pop("status", None)
            else:
                new["status"] = status
        else:
            new["apiVersion"], new["kind"] = kind.info.api_version, kind.info.kind
            if not kind.has_status:
                new.pop("status", None)
            if kind.status_subresource:
                if "status" in old:
                    new["status"] = copy.deepcopy(old["status"])
                else:
                    new.pop("status", None)
            for server_field in (
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
                "namespace",
                "name",
            ):
                if server_field in old_meta:
                    metadata[server_field] = old_meta[server_field]
                else:
                    metadata.pop(server_field, None)
            metadata.pop("managedFields", None)
            if old_meta.get("deletionTimestamp"):
                added = set(metadata.get("finalizers") or []) - set(
                    old_meta.get("finalizers") or []
                )
                if added:
                    raise invalid(
                        kind,
                        name,
                        "metadata.finalizers",
                        "Forbidden: no new finalizers can be added if the object is being "
                        f"deleted, found new finalizers {sorted(added)}",
                    )
        _tidy(metadata)
        metadata["resourceVersion"] = old_meta["resourceVersion"]
        if kind.tracks_generation and _spec_part(new, kind) != _spec_part(old, kind):
            metadata["generation"] = int(old_meta.get("generation") or 0) + 1
        if new == old:
            return copy.deepcopy(new)  # a no-op write: no new version, no event
        if metadata.get("deletionTimestamp") and not metadata.get("finalizers"):
            # The last finalizer is gone: the object goes, and the answer is it as updated.
            self._remove(stored, namespace, name)
            self._collect_garbage()
            return new
        metadata["resourceVersion"] = self._next_revision()
        stored.obj = new
        self._record("MODIFIED", kind, new, copy.deepcopy(old))
        answer = copy.deepcopy(new)
        self._collect_if_owners_gone(self._key(kind, namespace, name))
        return answer

    def delete(
        self,
        kind: FakeKind,
        namespace: str | None,
        name: str,
        options: Obj,
    ) -> Obj:
        """DELETE: gone now, or marked with ``deletionTimestamp`` while finalizers remain."""
        stored = self._stored(kind, namespace, name)
        old_meta = stored.obj["metadata"]
        preconditions = options.get("preconditions") or {}
        for key, label, consequence in _DELETE_PRECONDITIONS:
            want = preconditions.get(key)
            if want is not None and want != old_meta[key]:
                raise precondition_failed(
                    kind,
                    name,
                    f"the {label} in the precondition ({want}) does not match the {label} in "
                    f"record ({old_meta[key]}). The object might have been {consequence}",
                )
        policy = options.get("propagationPolicy")
        if policy is None and kind.info.kind == "Job" and kind.info.group == "batch":
            policy = "Orphan"  # batch/v1 Jobs orphan their pods by default
        obj = copy.deepcopy(stored.obj)
        metadata = obj["metadata"]
        finalizers = list(metadata.get("finalizers") or [])
        if policy == "Foreground" and _FOREGROUND not in finalizers:
            finalizers.append(_FOREGROUND)
        elif policy == "Orphan" and _ORPHAN not in finalizers:
            finalizers.append(_ORPHAN)
        grace = self._grace_period(kind, obj, options)
        if not finalizers and not grace:
            if metadata.get("deletionTimestamp"):
                # A forced delete of a terminating pod: it ends with its grace cut to 0.
                metadata["deletionGracePeriodSeconds"] = 0
                stored.obj = obj
            removed = self._remove(stored, namespace, name)
            self._collect_garbage()
            return removed
        if metadata.get("deletionTimestamp"):
            if grace >= int(metadata.get("deletionGracePeriodSeconds") or 0):
                return obj  # already being deleted, no sooner: nothing changes
            # A shorter grace period (a forced delete) is written, or ends the object.
            metadata["deletionGracePeriodSeconds"] = grace
            if grace == 0 and not finalizers:
                stored.obj = obj
                return self._remove(stored, namespace, name)
            metadata["resourceVersion"] = self._next_revision()
            previous, stored.obj = stored.obj, obj
            self._record("MODIFIED", kind, obj, copy.deepcopy(previous))
            return copy.deepcopy(obj)
        metadata["deletionTimestamp"] = _now_text(self._clock)
        metadata["deletionGracePeriodSeconds"] = grace
        if finalizers:
            metadata["finalizers"] = finalizers
        if kind.tracks_generation:
            metadata["generation"] = int(metadata.get("generation") or 0) + 1
        metadata["resourceVersion"] = self._next_revision()
        previous, stored.obj = stored.obj, obj
        self._record("MODIFIED", kind, obj, copy.deepcopy(previous))
        self._collect_garbage()
        return copy.deepcopy(stored.obj)

    def apply(
        self,
        kind: FakeKind,
        namespace: str | None,
        name: str,
        applied: Obj,
        *,
        manager: str,
        subresource: str | None = None,
    ) -> Obj:
        """Server-side apply as :mod:`crdkit.testing.fake.patch` approximates it."""
        key = self._key(kind, namespace, name)
        owner = f"{manager}/{subresource or ''}"
        paths = applied_paths(applied)
        stored = self._objects.get(key)
        if stored is None:
            if subresource is not None:
                raise not_found(kind, name)
            body = copy.deepcopy(applied)
            _meta(body).setdefault("name", name)
            created = self.create(kind, namespace, body)
            made = self._objects.get(key)
            if made is not None:  # None: collected at once, its owners being gone
                made.applied[owner] = paths
            return created
        merged = merge_applied(stored.obj, applied)
        for path in stored.applied.get(owner, frozenset()) - paths:
            if not any(path in other for m, other in stored.applied.items() if m != owner):
                remove_path(merged, path)
        _meta(merged)["resourceVersion"] = (
            _meta(copy.deepcopy(applied)).get("resourceVersion")
            or stored.obj["metadata"]["resourceVersion"]
        )
        result = self.update(kind, namespace, name, merged, subresource=subresource)
        if key in self._objects:
            self._objects[key].applied[owner] = paths
        return result

    def bind(
        self, kind: FakeKind, namespace: str | None, name: str, node: str, uid: str | None
    ) -> None:
        """``pods/<name>/binding``: set ``spec.nodeName`` once, as the scheduler's bind does
        (straight to storage: no generation bump), with the PodScheduled condition."""
        stored = self._stored(kind, namespace, name)
        pod = copy.deepcopy(stored.obj)

        if uid and uid != pod["metadata"]["uid"]:
            raise binding_conflict(name, f"the UID in the binding ({uid}) does not match the pod's")
        spec = pod.setdefault("spec", {})
        if spec.get("nodeName"):
            raise binding_conflict(
                name, f'pod {name} is already assigned to node "{spec["nodeName"]}"'
            )
        if pod["metadata"].get("deletionTimestamp"):
            raise binding_conflict(
                name, f"pod {name} is being deleted, cannot be assigned to a host"
            )
        spec["nodeName"] = node
        conditions = pod.setdefault("status", {}).setdefault("conditions", [])
        conditions[:] = [c for c in conditions if c.get("type") != "PodScheduled"]
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": _now_text(self._clock),
            }
        )
        pod["metadata"]["resourceVersion"] = self._next_revision()
        previous, stored.obj = stored.obj, pod
        self._record("MODIFIED", kind, pod, copy.deepcopy(previous))

    @staticmethod
    def _grace_period(kind: FakeKind, obj: Obj, options: Obj) -> int:
        """Seconds a Pod on a node gets to stop (nothing else has a grace period here)."""
        if kind.info.kind != "Pod" or kind.info.group:
            return 0
        spec = obj.get("spec") or {}
        if not spec.get("nodeName"):
            return 0  # never scheduled: nothing to stop
        given = options.get("gracePeriodSeconds")
        if given is not None:
            return int(given)
        return int(spec.get("terminationGracePeriodSeconds", 30))

    def _remove(self, stored: Stored, namespace: str | None, name: str) -> Obj:
        key = self._key(stored.kind, namespace, name)
        del self._objects[key]
        self._gone.add(str(stored.obj["metadata"].get("uid")))
        final = copy.deepcopy(stored.obj)
        final["metadata"]["resourceVersion"] = self._next_revision()
        self._record("DELETED", stored.kind, final)
        if stored.kind.info.kind == "Namespace" and not stored.kind.info.group:
            self._empty_namespace(name)
        return final

    def _empty_namespace(self, namespace: str) -> None:
        """A deleted namespace takes its objects with it (the namespace controller's job)."""
        for key, stored in list(self._objects.items()):
            if key[3] == namespace and key in self._objects:
                self.delete(stored.kind, namespace, key[4], {"propagationPolicy": "Background"})

    # -- garbage collection -----------------------------------------------------------------

    def _collect_garbage(self) -> None:
        """What kube-controller-manager's garbage collector does, run to a fixed point.

        Dependents of a vanished owner are deleted (background); an owner deleting in the
        foreground waits for its blocking dependents, then loses ``foregroundDeletion``; an
        orphaning owner strips its owner references from its dependents, then loses
        ``orphan``.
        """
        if self._collecting:
            return  # the running collection goes round again: it sees this change
        self._collecting = True
        try:
            self._collect_until_stable()
        finally:
            self._collecting = False

    def _collect_until_stable(self) -> None:
        changed = True
        while changed:
            changed = False
            live = {
                stored.obj["metadata"]["uid"]: stored for stored in list(self._objects.values())
            }
            for key, stored in list(self._objects.items()):
                if key not in self._objects:
                    continue
                metadata = stored.obj["metadata"]
                finalizers = metadata.get("finalizers") or []
                if metadata.get("deletionTimestamp") and _ORPHAN in finalizers:
                    self._orphan_dependents(metadata["uid"])
                    self._drop_finalizer(stored, key, _ORPHAN)
                    changed = True
                    continue
                if metadata.get("deletionTimestamp") and _FOREGROUND in finalizers:
                    if not self._dependents(metadata["uid"]):
                        self._drop_finalizer(stored, key, _FOREGROUND)
                        changed = True
                        continue
                    for dependent_key, dependent in self._dependents(metadata["uid"]):
                        if not dependent.obj["metadata"].get("deletionTimestamp"):
                            self.delete(
                                dependent.kind,
                                dependent_key[3],
                                dependent_key[4],
                                {"propagationPolicy": "Foreground"},
                            )
                            changed = True
                owners = metadata.get("ownerReferences") or []
                if (
                    owners
                    and not metadata.get("deletionTimestamp")
                    and all(ref.get("uid") not in live for ref in owners)
                ):
                    self.delete(stored.kind, key[3], key[4], {"propagationPolicy": "Background"})
                    changed = True

    def _collect_if_owners_gone(self, key: Key) -> None:
        """An object written with owner references to objects that are all gone already is
        the collector's to delete, as the real one does when it finds the owners missing
        (a reconcile that read its owner just before the owner's deletion applies a child
        after it: crash tests of the hello example met one). Owners never seen here are
        not judged: the real collector cannot resolve them either."""
        stored = self._objects.get(key)
        if stored is None or self._collecting:
            return
        metadata = stored.obj["metadata"]
        owners = metadata.get("ownerReferences") or []
        if (
            owners
            and not metadata.get("deletionTimestamp")
            and all(str(ref.get("uid")) in self._gone for ref in owners)
        ):
            self.delete(stored.kind, key[3], key[4], {"propagationPolicy": "Background"})

    def _dependents(self, uid: str) -> list[tuple[Key, Stored]]:
        return [
            (key, stored)
            for key, stored in self._objects.items()
            if any(
                ref.get("uid") == uid for ref in stored.obj["metadata"].get("ownerReferences") or []
            )
        ]

    def _orphan_dependents(self, uid: str) -> None:
        for key, stored in self._dependents(uid):
            obj = copy.deepcopy(stored.obj)
            refs = [r for r in obj["metadata"]["ownerReferences"] if r.get("uid") != uid]
            if refs:
                obj["metadata"]["ownerReferences"] = refs
            else:
                obj["metadata"].pop("ownerReferences")
            self.update(stored.kind, key[3], key[4], obj)

    def _drop_finalizer(self, stored: Stored, key: Key, finalizer: str) -> None:
        obj = copy.deepcopy(stored.obj)
        obj["metadata"]["finalizers"] = [
            f for f in obj["metadata"].get("finalizers") or [] if f != finalizer
        ]
        self.update(stored.kind, key[3], key[4], obj)
