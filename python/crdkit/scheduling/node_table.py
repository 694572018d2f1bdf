"""``NodeTable``: the nodes of a `crdkit.scheduling.ClusterMirror`, as its placer `Cluster`
and the cluster's empty twin see them.

Each node is kept as its placer entry (`crdkit.scheduling.nodes.node_entry`) and compiled once
per change. A scheduler may hold nodes for a waiting gang: the placer's view of a held node then
carries the `HOLD_TAINT` taint, which only the gangs allowed there tolerate, while the entry,
the compiled record and the twin keep the node as its object says
(`crdkit.scheduling.reservations`).

It knows nothing of pods: the mirror tells its `crdkit.scheduling.pod_ledger.PodLedger` when a
node comes or goes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from crdkit import _placer
    from crdkit.placer import Cluster

__all__ = ["HOLD_TAINT", "NodeTable"]

HOLD_TAINT = "scheduling.crdkit.io/reserved"
"""The ``NoSchedule`` taint a held node carries in the placer's view; its value names the
reservation. It is never written to a Node."""


class NodeTable:
    """The nodes by name, each added to ``cluster`` (with its hold's taint, if held) and to the
    empty twin once that is built; see the module docstring.

    ``levels``, ``cluster_type`` and ``search_budget`` are what the twin is built with.
    """

    def __init__(
        self,
        cluster: Cluster,
        levels: list[str],
        *,
        cluster_type: type[Cluster],
        search_budget: int | None,
    ) -> None:
        self._cluster = cluster
        self._levels = levels
        self._cluster_type = cluster_type
        self._search_budget = search_budget
        self._empty: Cluster | None = None
        self._entries: dict[str, dict[str, Any]] = {}
        self._records: dict[str, _placer.Node] = {}
        """Each node compiled once per change, without a hold's taint: what the empty twin
        and scratch clusters (`records`) are given, so none of them compiles it again."""
        self._held: dict[str, str] = {}
        """Held nodes: the value of their `HOLD_TAINT`."""

    @property
    def empty(self) -> Cluster:
        """The same nodes with no pods at all (`ClusterMirror.empty`): built on first use,
        then kept current by node changes only."""
        if self._empty is None:
            self._empty = self._cluster_type(
                self._levels, list(self._entries.values()), search_budget=self._search_budget
            )
        return self._empty

    # -- changes -----------------------------------------------------------------------------

    def changes(self, entry: dict[str, Any]) -> bool:
        """Whether ``entry`` differs from the node of that name kept (or there is none)."""
        return self._entries.get(entry["name"]) != entry

    def put(self, entry: dict[str, Any]) -> bool:
        """Add node ``entry``, or change the one of that name (its usage kept); whether it is
        new."""
        name = entry["name"]
        previous = self._entries.get(name)
        record = self._cluster.compile_node(entry)
        self._records[name] = record
        if previous is None:
            self._cluster.add_node(self._placer_entry(entry, record))
            if self._empty is not None:
                self._empty.add_node(record)
        else:
            self._cluster.update_node(self._placer_entry(entry, record), keep_used=True)
            if self._empty is not None:
                self._empty.update_node(record)
        self._entries[name] = entry
        return previous is None

    def remove(self, name: str) -> bool:
        """Take node ``name`` out, and its usage with it; whether it was there."""
        if self._entries.pop(name, None) is None:
            return False
        del self._records[name]
        self._cluster.remove_node(name)  # its usage goes with it
        if self._empty is not None:
            self._empty.remove_node(name)
        return True

    def _placer_entry(
        self, entry: dict[str, Any], record: _placer.Node
    ) -> dict[str, Any] | _placer.Node:
        """The node as the placer sees it: with its hold's taint, if it is held (``record``
        is ``entry`` compiled, which a node no hold taints is given as)."""
        held = self._held.get(entry["name"])
        if held is None:
            return record
        taint = {"key": HOLD_TAINT, "value": held, "effect": "NoSchedule"}
        return {**entry, "taints": [*entry["taints"], taint]}

    # -- holds -------------------------------------------------------------------------------

    def hold(self, names: Iterable[str], value: str) -> None:
        """Hold ``names`` for ``value`` (`ClusterMirror.hold`)."""
        for name in names:
            if self._held.get(name) == value:
                continue
            self._held[name] = value
            entry = self._entries.get(name)
            if entry is not None:
                self._cluster.update_node(
                    self._placer_entry(entry, self._records[name]), keep_used=True
                )

    def release(self, names: Iterable[str], value: str) -> bool:
        """Stop holding those of ``names`` held for ``value``; whether there was one."""
        released = False
        for name in names:
            if self._held.get(name) != value:
                continue
            del self._held[name]
            released = True
            if name in self._entries:
                self._cluster.update_node(self._records[name], keep_used=True)
        return released

    def placer_records(
        self, names: Iterable[str], honour: Callable[[str], bool] | None = None
    ) -> list[_placer.Node]:
        """The compiled records of those of ``names`` kept, as the placer sees them: a held
        node with its hold's taint (compiled again: holds are few), unless ``honour`` (given
        the hold's value) says to leave that hold out."""
        out = []
        for name in names:
            entry = self._entries.get(name)
            if entry is None:
                continue
            held = self._held.get(name)
            if held is not None and honour is not None and not honour(held):
                out.append(self._records[name])
                continue
            seen = self._placer_entry(entry, self._records[name])
            out.append(seen if not isinstance(seen, dict) else self._cluster.compile_node(seen))
        return out

    def holder(self, name: str) -> str | None:
        """The value node ``name`` is held for, if it is held."""
        return self._held.get(name)

    def held(self) -> dict[str, str]:
        """Every held node and the value of its hold."""
        return dict(self._held)

    # -- reading -----------------------------------------------------------------------------

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def entry(self, name: str) -> dict[str, Any] | None:
        """Node ``name``'s entry (a copy), if it is kept."""
        entry = self._entries.get(name)
        return None if entry is None else dict(entry)

    def names(self) -> list[str]:
        """Every node's name, sorted."""
        return sorted(self._entries)

    def entries(self) -> Iterable[dict[str, Any]]:
        """Every node's entry, in no particular order; do not change them."""
        return self._entries.values()

    def records(self, names: Iterable[str]) -> list[_placer.Node]:
        """The compiled records of those of ``names`` kept, in that order."""
        return [self._records[name] for name in names if name in self._records]
