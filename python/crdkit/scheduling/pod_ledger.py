"""``PodLedger``: the pods a `crdkit.scheduling.ClusterMirror` counts, and their usage in its
placer `Cluster`.

The Rust state is the only usage ledger: every pod that holds capacity is added to its node's
usage there once (`Cluster.add_pods`) and taken back once (`Cluster.remove_pods`). What this
ledger keeps in Python is per pod, not per node: which node each counted pod sits on and what
it asked for, so that its usage can be taken back exactly when it goes, and whether it is
counted from a decision only (assumed) until its bind shows, with kube-scheduler's assume cache
rules (the mirror's module docstring tells them).

It reads no Pod: the mirror reads each event and tells the ledger what it shows (`bound`,
`unbound`, `remove`). It knows the nodes only through ``has_node``: a pod on a node the placer
does not have is remembered, and counted when the mirror says the node came (`node_added`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from crdkit.placer import Cluster

__all__ = ["PodLedger"]


@dataclass
class _Counted:
    """One pod the mirror counts (or will count once its node is there)."""

    node: str
    milli: dict[str, int]
    uid: str | None
    assumed: bool
    """Counted from a decision; its pod has not been seen bound yet."""
    deadline: float | None = None
    """When an assumption whose binding finished expires; None while binding."""
    applied: bool = False
    """Whether its usage is in the Rust state (false while its node is absent)."""


class PodLedger:
    """The counted pods by key (``namespace/name``), each added to ``cluster`` while its node
    is there; see the module docstring.

    ``has_node`` tells whether ``cluster`` has a node. ``freed`` is called whenever a pod's
    going may have freed room. ``clock`` (seconds, monotonic) is read only for assumption
    expiry; an assumption whose binding finished expires ``assume_ttl`` seconds later.
    """

    def __init__(
        self,
        cluster: Cluster,
        *,
        has_node: Callable[[str], bool],
        freed: Callable[[], None],
        assume_ttl: float,
        clock: Callable[[], float],
    ) -> None:
        self._cluster = cluster
        self._has_node = has_node
        self._freed = freed
        self.assume_ttl = assume_ttl
        self._clock = clock
        self._pods: dict[str, _Counted] = {}
        self._on_node: dict[str, set[str]] = {}
        self._expiring: dict[str, float] = {}
        """The deadlines of the assumptions whose binding finished, by pod key: what
        `expire` reads, so a decision does not scan every counted pod."""
        self.usage_version = 0
        """Grows whenever a pod's usage enters or leaves the placer's state (counted, assumed,
        dropped, or gone with its node)."""

    # -- what the pods' events show ----------------------------------------------------------

    def bound(self, key: str, node: str, milli: dict[str, int], uid: str | None) -> None:
        """Pod ``key`` is seen bound to ``node`` and holding ``milli`` (kept, not copied): an
        assumption of the same is confirmed; a pod counted elsewhere or for other requests is
        moved."""
        record = self._pods.get(key)
        if record is not None and record.node == node and record.milli == milli:
            record.assumed, record.deadline, record.uid = False, None, uid
            self._expiring.pop(key, None)
            return
        self._drop(key, notify=False)
        self._count(key, _Counted(node, milli, uid, assumed=False))
        if record is not None:
            self._freed()  # moved or shrank: its old room may be free

    def unbound(self, key: str, uid: str | None, *, finished: bool) -> None:
        """Pod ``key`` (``uid``) is seen holding nothing: not bound, or ``finished``."""
        record = self._pods.get(key)
        if record is not None and record.assumed and record.uid == uid and not finished:
            return  # the bind is not visible yet: keep what the decision counted
        self._drop(key)

    def remove(self, key: str, uid: str | None = None) -> None:
        """Pod ``key`` is gone; given its ``uid``, only if the pod counted is that one."""
        record = self._pods.get(key)
        if record is not None and uid and record.uid and record.uid != uid:
            return  # its controller made a new pod of that name, and that one is counted
        self._drop(key)

    # -- decisions ---------------------------------------------------------------------------

    def assume(self, key: str, node: str, milli: Mapping[str, int], uid: str | None) -> None:
        """Count pod ``key`` on ``node`` from a decision; a pod already counted is moved."""
        self._drop(key, notify=False)
        self._count(key, _Counted(node, dict(milli), uid, assumed=True))

    def binding_finished(self, key: str) -> None:
        """Start the expiry of pod ``key``'s assumption, if it is one."""
        record = self._pods.get(key)
        if record is not None and record.assumed:
            record.deadline = self._expiring[key] = self._clock() + self.assume_ttl

    def forget(self, key: str) -> None:
        """Take back pod ``key``'s assumption, if it is one."""
        record = self._pods.get(key)
        if record is not None and record.assumed:
            self._drop(key)

    def expire(self) -> list[str]:
        """Drop the assumptions past their deadline; their keys, sorted."""
        now = self._clock()
        if not self._expiring:
            return []
        expired = sorted(key for key, deadline in self._expiring.items() if deadline <= now)
        for key in expired:
            self._drop(key)
        return expired

    # -- nodes -------------------------------------------------------------------------------

    def node_added(self, name: str) -> None:
        """Node ``name`` is in the placer now: count the pods that waited for it."""
        for key in sorted(self._on_node.get(name, ())):
            record = self._pods[key]
            if not record.applied:
                self._cluster.add_pods(name, record.milli)
                record.applied = True
                self.usage_version += 1

    def node_removed(self, name: str) -> None:
        """Node ``name`` left the placer, and its pods' usage with it; they stay remembered."""
        for key in self._on_node.get(name, ()):
            self._pods[key].applied = False
        self.usage_version += 1

    # -- reading -----------------------------------------------------------------------------

    def is_counted(self, key: str) -> bool:
        """Whether pod ``key`` is counted (bound, or assumed)."""
        return key in self._pods

    def is_assumed(self, key: str) -> bool:
        """Whether pod ``key`` is counted from a decision only."""
        record = self._pods.get(key)
        return record is not None and record.assumed

    def requests_of(self, key: str) -> dict[str, int] | None:
        """What counted pod ``key`` asked for, in milli-units (a copy)."""
        record = self._pods.get(key)
        return None if record is None else dict(record.milli)

    def node_of(self, key: str) -> str | None:
        """The node pod ``key`` is counted on, if it is."""
        record = self._pods.get(key)
        return None if record is None else record.node

    def pods_on(self, node: str) -> list[str]:
        """The keys of the pods counted on ``node``, sorted."""
        return sorted(self._on_node.get(node, ()))

    # -- the ledger and the placer's state ---------------------------------------------------

    def _count(self, key: str, record: _Counted) -> None:
        self._pods[key] = record
        self._on_node.setdefault(record.node, set()).add(key)
        if self._has_node(record.node):
            self._cluster.add_pods(record.node, record.milli)
            record.applied = True
            self.usage_version += 1

    def _drop(self, key: str, *, notify: bool = True) -> None:
        record = self._pods.pop(key, None)
        if record is None:
            return
        self._expiring.pop(key, None)
        keys = self._on_node[record.node]
        keys.discard(key)
        if not keys:
            del self._on_node[record.node]
        if record.applied:
            self._cluster.remove_pods(record.node, record.milli)
            self.usage_version += 1
        if notify:
            self._freed()
