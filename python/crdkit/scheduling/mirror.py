"""``ClusterMirror``: a placer `Cluster` kept current, event by event, from Nodes and Pods.

The Rust state is the only usage ledger: every pod that holds capacity is added to its node's
usage there once (`Cluster.add_pods`) and taken back once (`Cluster.remove_pods`), so a
decision never rebuilds anything. What the mirror keeps in Python is per pod, not per node:
which node each counted pod sits on and what it asked for, so that its usage can be taken back
exactly when it goes. That is its `crdkit.scheduling.pod_ledger.PodLedger`; its nodes, compiled
once per change, and the holds on them are its `crdkit.scheduling.node_table.NodeTable`. The
mirror feeds both from the events, numbers the changes (`version`, `nodes_version`,
`usage_version`) and tells its listeners when room may have freed.

A pod holds capacity while it is bound (``spec.nodeName``) and not finished (phase neither
``Succeeded`` nor ``Failed``), as kube-scheduler counts it; a pod with a deletion timestamp still
holds it until it is gone. A scheduler's decision is counted before the apiserver shows it:

- ``assume_pod`` counts a pod on the node it was placed on, at decision time;
- the pod's own event with that ``nodeName`` confirms the assumption (nothing is counted twice;
  events of the pod that do not show it bound yet leave the assumption alone, since the
  informer may lag behind the bind);
- ``forget_pod`` takes it back when its bind failed;
- an assumption whose binding finished (``binding_finished``) but whose pod never showed up
  bound expires ``assume_ttl`` seconds later, as in kube-scheduler's assume cache.

Nodes come from their objects (`crdkit.scheduling.nodes.node_entry`); a Node event that changes
nothing the placer reads (a heartbeat) costs a comparison. Pods on a node the mirror does not
have (not yet seen, deleted, or outside the scheduler's node selector) are remembered and
counted once the node is there.

A scheduler may hold nodes for a waiting gang (`hold`): the placer's view of a held node then
carries the `HOLD_TAINT` taint, which only the gangs allowed there tolerate; `node` and
`nodes` still give the node as its object says (`crdkit.scheduling.reservations`).

A pod's requests are parsed once per version of it (its uid and resourceVersion): `set_pod`
parses every pod it is given, pending or bound, and `requests` gives them back without parsing
again. A malformed request of a pod that holds nothing is not the mirror's to report: `requests`
raises it to whoever places the pod.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Any, TypeVar

from crdkit.placer import Cluster, Placement
from crdkit.placer.policies import DEFAULT_POLICY
from crdkit.resources import Node, Pod
from crdkit.scheduling.node_table import HOLD_TAINT, NodeTable
from crdkit.scheduling.nodes import node_entry
from crdkit.scheduling.pod_ledger import PodLedger
from crdkit.scheduling.requests import pod_requests

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence

    from crdkit import _placer
    from crdkit.placer.cluster import GangInput, Policy
    from crdkit.runtime.manager import Manager

_T = TypeVar("_T")

__all__ = ["HOLD_TAINT", "TERMINAL_PHASES", "ClusterMirror", "pod_holds_capacity", "pod_key"]

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


def pod_key(namespace: str | None, name: str | None) -> str:
    """``namespace/name`` of a pod, the mirror's key for it."""
    return f"{namespace or 'default'}/{name}"


def pod_holds_capacity(pod: Pod) -> bool:
    """Bound and not finished: the pod holds its requests on its node."""
    phase = pod.status.phase if pod.status else None
    return bool(pod.spec.node_name) and phase not in TERMINAL_PHASES


class _ParsedRequests:
    """Each pod's requests as `pod_requests` gives them, by pod key, kept with the uid and
    resourceVersion they were read from: each version of a pod is parsed once."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[str | None, str, dict[str, int]]] = {}

    def of(self, key: str, pod: Pod) -> dict[str, int]:
        """``pod_requests(pod)``, parsed again only if ``pod`` is not the version kept."""
        uid, version = pod.metadata.uid, pod.metadata.resource_version
        kept = self._kept.get(key)
        if kept is not None and version and kept[0] == uid and kept[1] == version:
            return kept[2]
        milli = pod_requests(pod)
        if version:  # a pod without one (not from the apiserver) cannot tell its versions apart
            self._kept[key] = (uid, version, milli)
        return milli

    def forget(self, key: str, uid: str | None = None) -> None:
        """Drop pod ``key``'s requests; given a ``uid``, only if they were read from it."""
        kept = self._kept.get(key)
        if kept is not None and not (uid and kept[0] and kept[0] != uid):
            del self._kept[key]


class ClusterMirror:
    """Nodes and the pods on them, as a placer `Cluster`; see the module docstring.

    ``levels`` are the topology's node label keys, widest first (the placer's ``levels``).
    ``clock`` (seconds, monotonic) is read only for assumption expiry, so tests can drive it.
    ``cluster_type`` may be `crdkit.placer.ReferenceCluster` for the pure-Python engine.
    ``place_inline``: the ``async`` placements run on the event loop instead of a worker
    thread, for simulations on a virtual clock (`crdkit.testing.sim.virtual_time`), where the
    loop's wait for a worker thread would let virtual time jump.
    """

    def __init__(
        self,
        levels: Sequence[str] = (),
        *,
        assume_ttl: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        search_budget: int | None = None,
        cluster_type: type[Cluster] = Cluster,
        place_inline: bool = False,
    ) -> None:
        self.place_inline = place_inline
        if assume_ttl <= 0:
            raise ValueError(f"assume_ttl: must be positive, got {assume_ttl!r}")
        self.levels = list(levels)
        """The topology's levels as given (the placer may add its per-node level)."""
        self.cluster = cluster_type(levels, search_budget=search_budget)
        self._nodes = NodeTable(
            self.cluster, self.levels, cluster_type=cluster_type, search_budget=search_budget
        )
        self._ledger = PodLedger(
            self.cluster,
            has_node=self._nodes.__contains__,
            freed=self._freed,
            assume_ttl=assume_ttl,
            clock=clock,
        )
        self._requests = _ParsedRequests()
        self._listeners: list[Callable[[], None]] = []
        self.version = 0
        """Grows whenever capacity may have grown (a node came or changed, a pod went): a
        scheduler that found no room can tell whether looking again may help."""
        self.nodes_version = 0
        """Grows whenever a node comes, changes what the placer reads, or goes."""
        self._derived: dict[Hashable, tuple[tuple[int, int], Any]] = {}

    @property
    def usage_version(self) -> int:
        """Grows whenever a pod's usage enters or leaves the placer's state (counted, assumed,
        dropped, or gone with its node): with `version`, what an answer about usage read."""
        return self._ledger.usage_version

    @property
    def assume_ttl(self) -> float:
        """Seconds after its binding finished that an assumption not seen bound expires."""
        return self._ledger.assume_ttl

    @assume_ttl.setter
    def assume_ttl(self, seconds: float) -> None:
        self._ledger.assume_ttl = seconds

    @property
    def empty(self) -> Cluster:
        """The same nodes with no pods at all: what could ever fit (for explanations).

        Built on first use from the nodes the mirror has, then kept current by node events only
        (pods never reach it), so a mirror that never explains keeps one engine. It is a second
        engine, not a mode of the first: the search prunes by per-domain free aggregates, which
        an "as if empty" question would need a second set of anyway, and rebuilding it per
        question costs a whole cluster's compile (`benches/mirror_twin_bench.py`).
        """
        return self._nodes.empty

    def derived(self, key: Hashable, build: Callable[[], _T], *, usage: bool = True) -> _T:
        """``build()``, kept under ``key`` until the nodes change (or, with ``usage``, the
        pods' usage too): what many readers of one state derive from it is derived once."""
        state = (self.nodes_version, self.usage_version if usage else -1)
        kept = self._derived.get(key)
        if kept is not None and kept[0] == state:
            value: _T = kept[1]
            return value
        value = build()
        self._derived[key] = (state, value)
        return value

    # -- wiring ----------------------------------------------------------------------------

    def attach(self, manager: Manager, *, node_selector: str | None = None) -> None:
        """Feed the mirror from ``manager``'s shared Node and Pod informers (all namespaces:
        every pod on a node takes capacity, whoever made it). ``node_selector`` (a label
        selector) limits the nodes the mirror sees."""
        nodes = manager.informers.informer(Node, label_selector=node_selector)
        pods = manager.informers.informer(Pod)
        nodes.add_event_handler(
            self.set_node, lambda _old, new: self.set_node(new), self.remove_node, reads_old=False
        )
        pods.add_event_handler(
            self.set_pod, lambda _old, new: self.set_pod(new), self.remove_pod, reads_old=False
        )

    def on_capacity_freed(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the event loop, synchronously) whenever capacity may have
        grown: a node added or changed, a pod gone or finished, an assumption dropped."""
        self._listeners.append(callback)

    def _freed(self) -> None:
        self.version += 1
        for callback in self._listeners:
            callback()

    # -- nodes -----------------------------------------------------------------------------

    def set_node(self, node: Node) -> None:
        """A Node was added or changed."""
        entry = node_entry(node)
        if not self._nodes.changes(entry):
            return  # a heartbeat: nothing the placer reads changed
        self.nodes_version += 1
        if self._nodes.put(entry):
            self._ledger.node_added(entry["name"])  # the pods that waited for it count now
        self._freed()

    def remove_node(self, node: Node | str) -> None:
        """A Node is gone; its pods stay remembered and count again if it comes back."""
        name = node if isinstance(node, str) else node.metadata.name or ""
        if not self._nodes.remove(name):
            return
        self.nodes_version += 1
        self._ledger.node_removed(name)

    def hold(self, nodes: Iterable[str], value: str) -> None:
        """Hold ``nodes`` (taint them ``HOLD_TAINT=value:NoSchedule`` for the placer); a node
        held already is held for ``value`` instead. Unknown nodes are held once they come."""
        self._nodes.hold(nodes, value)

    def release(self, nodes: Iterable[str], value: str) -> None:
        """Stop holding those of ``nodes`` held for ``value``: capacity may have grown."""
        if self._nodes.release(nodes, value):
            self._freed()

    def holder(self, name: str) -> str | None:
        """The value node ``name`` is held for, if it is held."""
        return self._nodes.holder(name)

    def held(self) -> dict[str, str]:
        """Every held node and the value of its hold."""
        return self._nodes.held()

    # -- pods ------------------------------------------------------------------------------

    def set_pod(self, pod: Pod) -> None:
        """A Pod was added or changed."""
        key = pod_key(pod.metadata.namespace, pod.metadata.name)
        uid = pod.metadata.uid
        if pod_holds_capacity(pod):
            node = pod.spec.node_name or ""
            self._ledger.bound(key, node, self._requests.of(key, pod), uid)
            return
        with contextlib.suppress(ValueError):  # told by whoever places the pod, not here
            self._requests.of(key, pod)
        finished = pod.status is not None and pod.status.phase in TERMINAL_PHASES
        self._ledger.unbound(key, uid, finished=finished)

    def remove_pod(self, pod: Pod | str) -> None:
        """A Pod is gone: what it held is free at once. Given a Pod, only that pod: a newer
        pod of the same name (another uid) stays counted."""
        if isinstance(pod, str):
            self._requests.forget(pod)
            self._ledger.remove(pod)
            return
        key = pod_key(pod.metadata.namespace, pod.metadata.name)
        self._requests.forget(key, pod.metadata.uid)
        self._ledger.remove(key, pod.metadata.uid)

    def requests(self, pod: Pod) -> Mapping[str, int]:
        """``pod``'s requests in milli-units, as `pod_requests` gives them, parsed once per
        version of the pod (uid and resourceVersion) the mirror sees; do not change them."""
        return self._requests.of(pod_key(pod.metadata.namespace, pod.metadata.name), pod)

    # -- decisions -------------------------------------------------------------------------

    def assume_pod(
        self, key: str, node: str, milli: Mapping[str, int], *, uid: str | None = None
    ) -> None:
        """Count pod ``key`` on ``node`` now, before its bind shows (``milli``: its requests,
        as `pod_requests` gives them). A pod already counted is moved."""
        if node not in self._nodes:
            raise ValueError(f'node: the mirror has no node "{node}"')
        self._ledger.assume(key, node, milli, uid)

    def binding_finished(self, key: str) -> None:
        """The bind of an assumed pod was sent: its assumption now expires after
        ``assume_ttl`` unless the pod shows up bound."""
        self._ledger.binding_finished(key)

    def forget_pod(self, key: str) -> None:
        """Take back an assumption whose bind did not happen (a pod seen bound stays)."""
        self._ledger.forget(key)

    def expire_assumed(self) -> list[str]:
        """Drop the assumptions past their deadline; their keys, sorted."""
        return self._ledger.expire()

    # -- reading ---------------------------------------------------------------------------

    def is_counted(self, key: str) -> bool:
        """Whether pod ``key`` is counted (bound, or assumed)."""
        return self._ledger.is_counted(key)

    def is_assumed(self, key: str) -> bool:
        """Whether pod ``key`` is counted from a decision only."""
        return self._ledger.is_assumed(key)

    def requests_of(self, key: str) -> dict[str, int] | None:
        """What counted pod ``key`` asked for (milli-units, as `pod_requests` gives them)."""
        return self._ledger.requests_of(key)

    def node_of(self, key: str) -> str | None:
        """The node pod ``key`` is counted on, if it is."""
        return self._ledger.node_of(key)

    def pods_on(self, node: str) -> list[str]:
        """The keys of the pods counted on ``node``, sorted."""
        return self._ledger.pods_on(node)

    def node(self, name: str) -> dict[str, Any] | None:
        """The placer's entry for node ``name`` (without usage), if the mirror has it."""
        return self._nodes.entry(name)

    def node_names(self) -> list[str]:
        """Every node's name, sorted."""
        return self._nodes.names()

    def nodes(self) -> Iterable[dict[str, Any]]:
        """Every node's entry (without usage), in no particular order; do not change them."""
        return self._nodes.entries()

    def node_records(self, names: Iterable[str]) -> list[_placer.Node]:
        """The compiled records of those of ``names`` the mirror has (without holds' taints or
        usage), in that order: a scratch `Cluster` of them compiles nothing again."""
        return self._nodes.records(names)

    def placer_records(
        self, names: Iterable[str], honour: Callable[[str], bool] | None = None
    ) -> list[_placer.Node]:
        """The compiled records of those of ``names`` the mirror has, as its placer sees them
        (with holds' taints, without usage), in that order: for a scratch cluster that must
        honour holds as the mirror's own does. ``honour(value)`` false leaves a hold out."""
        return self._nodes.placer_records(names, honour)

    def used(self, node: str) -> dict[str, int]:
        """What the counted pods take on ``node``, in milli-units (the Rust state's figure)."""
        return self.cluster.node_used(node) or {}

    def __len__(self) -> int:
        return len(self._nodes)

    # -- placing ---------------------------------------------------------------------------

    def place(self, gang: GangInput, policy: Policy = DEFAULT_POLICY) -> Placement:
        """Where ``gang`` goes now (expired assumptions dropped first); nothing is counted."""
        self.expire_assumed()
        return self.cluster.place(gang, policy)

    async def place_all_async(
        self, gangs: Iterable[GangInput], policy: Policy = DEFAULT_POLICY
    ) -> list[Placement]:
        """`Cluster.place_all_async` after dropping expired assumptions."""
        self.expire_assumed()
        if self.place_inline:
            return self.cluster.place_all(gangs, policy)
        return await self.cluster.place_all_async(gangs, policy)

    async def place_all_records_async(
        self, gangs: Sequence[_placer.Gang], policy: Policy = DEFAULT_POLICY
    ) -> list[_placer.Outcome]:
        """`Cluster.place_all_records_async` after dropping expired assumptions: the engine's
        own answers, as a scheduler's pass reads them."""
        self.expire_assumed()
        if self.place_inline:
            return self.cluster.place_all_records(gangs, policy)
        return await self.cluster.place_all_records_async(gangs, policy)
