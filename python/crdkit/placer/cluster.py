"""`Cluster`: the cluster state and the placer's Python API, backed by the Rust core.

The class validates input against the contract (docs/reference/placement-io.md) and compiles it once
into the binding's typed records (`crdkit._placer.Node`, `Gang`, ...); the engine answers with
an `crdkit._placer.Outcome` record that becomes a `Placement`. The Rust engine
(`crdkit._placer.Engine`) releases the GIL while it works, batches included (`place_all` runs in
Rust); `place_async` runs it on a worker thread so an event loop keeps serving while a decision
is made. `ReferenceCluster` is the same API over the pure-Python engine of
`crdkit.placer.reference`, which reads the same records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from crdkit import _placer
from crdkit.placer.models import (
    HOSTNAME_LEVEL,
    ClusterSnapshot,
    Gang,
    NodeSpec,
    Placement,
    QuantityParser,
    compile_gang,
    compile_node,
    compile_snapshot,
    load_document,
    validated,
)
from crdkit.placer.policies import DEFAULT_POLICY, POLICIES

if TYPE_CHECKING:
    from crdkit.placer.reference import RawOutcome

__all__ = ["Cluster", "Policy", "ReferenceCluster"]

Policy = Literal["best-fit", "least-free", "binpack", "keep-whole"]
"""How domains and nodes are ranked: see `crdkit.placer.reference` for the definitions."""

GangInput = Gang | _placer.Gang | Mapping[str, Any]
"""A gang as a contract dict, a `Gang` model, or already compiled by `Cluster.compile`."""
NodeInput = NodeSpec | _placer.Node | Mapping[str, Any]
"""A node as a contract dict, a `NodeSpec` model, or already compiled by `Cluster.compile_node`."""


class _Engine(Protocol):
    """What `Cluster` needs of an engine: the API of `crdkit._placer.Engine`."""

    def add_node(self, node: _placer.Node) -> None: ...
    def add_nodes(self, nodes: list[_placer.Node]) -> None: ...
    def update_node(self, node: _placer.Node, keep_used: bool = False) -> None: ...
    def remove_node(self, name: str) -> None: ...
    def place(self, gang: _placer.Gang, policy: str = ...) -> _placer.Outcome: ...
    def place_all(self, gangs: list[_placer.Gang], policy: str = ...) -> list[_placer.Outcome]: ...
    def assume(self, gang: _placer.Gang, assignments: list[_placer.Assignment]) -> None: ...
    def release(self, gang: _placer.Gang, assignments: list[_placer.Assignment]) -> None: ...
    def add_pods(self, items: list[tuple[str, list[tuple[str, int]], int]]) -> None: ...
    def remove_pods(self, items: list[tuple[str, list[tuple[str, int]], int]]) -> None: ...
    def node_used(self, name: str) -> dict[str, int] | None: ...
    def used(self) -> dict[str, dict[str, int]]: ...
    def __len__(self) -> int: ...


class Cluster:
    """A cluster's nodes and usage, and where gangs of pods go in it (the Rust core).

    Input is a contract document (a dict, a model, or for `from_snapshot` a JSON/YAML file);
    bad input raises `ValueError` whose one line names the field. Placing never changes the
    state: call `assume` once the pods are bound and `release` when they are gone.
    """

    _parse: QuantityParser = staticmethod(_placer.parse_quantity)

    def __init__(
        self,
        levels: Sequence[str] = (),
        nodes: Iterable[NodeSpec | Mapping[str, Any]] = (),
        *,
        search_budget: int | None = None,
    ) -> None:
        """``search_budget``: steps one exact-search attempt may take before it gives up with
        its own reason (default ``SEARCH_BUDGET``, 200,000); both engines count them alike."""
        snapshot = validated(
            ClusterSnapshot, {"levels": list(levels), "nodes": list(nodes)}, "cluster"
        )
        if search_budget is not None and (
            isinstance(search_budget, bool)
            or not isinstance(search_budget, int)
            or search_budget < 1
        ):
            raise ValueError(f"search_budget: expected a positive integer, got {search_budget!r}")
        self._levels, compiled = compile_snapshot(snapshot, self._parse)
        implicit = not snapshot.levels or snapshot.levels[-1] != HOSTNAME_LEVEL
        self._engine: _Engine = self._make_engine(self._levels, implicit, search_budget)
        self._engine.add_nodes(compiled)  # one call, one GIL release, for a whole snapshot

    @classmethod
    def from_snapshot(
        cls,
        snapshot: ClusterSnapshot | Mapping[str, Any] | str | Path,
        *,
        search_budget: int | None = None,
    ) -> Cluster:
        """A cluster from a snapshot model, dict, or JSON/YAML file path."""
        if isinstance(snapshot, str | Path):
            snapshot = load_document(snapshot)
        model = validated(ClusterSnapshot, snapshot, "cluster")
        return cls(model.levels, model.nodes, search_budget=search_budget)

    def _make_engine(
        self, levels: Sequence[str], implicit_host: bool, search_budget: int | None
    ) -> _Engine:
        return _placer.Engine(list(levels), implicit_host, search_budget)

    @property
    def levels(self) -> list[str]:
        """The effective levels, widest first, the per-node level last."""
        return list(self._levels)

    def compile_node(self, node: NodeInput, path: str = "node") -> _placer.Node:
        """Validates a node and compiles it into the placer's record (once: a compiled
        `crdkit._placer.Node` is returned as it is). A record does not depend on the levels,
        so one compiled record may be given to several clusters."""
        if isinstance(node, _placer.Node):
            return node
        return compile_node(validated(NodeSpec, node, path), self._parse, path)

    def add_node(self, node: NodeInput) -> None:
        """Adds a node (a `NodeSpec`, its dict, or a compiled record); its name must be new."""
        self._engine.add_node(self.compile_node(node))

    def add_nodes(self, nodes: Iterable[NodeInput]) -> None:
        """Adds several nodes in one call to the engine (one GIL release for the batch)."""
        self._engine.add_nodes([self.compile_node(n, f"nodes[{i}]") for i, n in enumerate(nodes)])

    def update_node(self, node: NodeInput, *, keep_used: bool = False) -> None:
        """Replaces the node of the same name: labels, capacity, usage, taints and flags.

        With ``keep_used`` the node keeps the usage it had (the new ``used`` is added to it):
        a Node object's changes do not move its pods."""
        self._engine.update_node(self.compile_node(node), keep_used)

    def remove_node(self, name: str) -> None:
        """Removes a node by name."""
        self._engine.remove_node(name)

    def add_pods(self, node: str, milli: Mapping[str, int], count: int = 1) -> None:
        """Counts ``count`` pods already on ``node``, each requesting ``milli`` (milli-units by
        resource, as `crdkit.scheduling.pod_requests` gives them); each also takes one ``pods``."""
        self._engine.add_pods([_pod_item(node, milli, count)])

    def remove_pods(self, node: str, milli: Mapping[str, int], count: int = 1) -> None:
        """Takes back what `add_pods` counted; refused (``ValueError``) below zero."""
        self._engine.remove_pods([_pod_item(node, milli, count)])

    def add_pods_many(self, pods: Iterable[tuple[str, Mapping[str, int], int]]) -> None:
        """`add_pods` for many (node, milli, count) at once: one call into the engine."""
        self._engine.add_pods([_pod_item(node, milli, count) for node, milli, count in pods])

    def remove_pods_many(self, pods: Iterable[tuple[str, Mapping[str, int], int]]) -> None:
        """`remove_pods` for many (node, milli, count) at once: one call into the engine."""
        self._engine.remove_pods([_pod_item(node, milli, count) for node, milli, count in pods])

    def node_used(self, name: str) -> dict[str, int] | None:
        """One node's usage in milli-units (zero amounts left out); None for an unknown node."""
        return self._engine.node_used(name)

    def used(self) -> dict[str, dict[str, int]]:
        """Every node's usage in milli-units (zero amounts left out), for inspection and tests."""
        return self._engine.used()

    def compile(
        self,
        gang: GangInput,
        path: str = "gang",
        *,
        milli: Mapping[str, Mapping[str, int]] | None = None,
    ) -> _placer.Gang:
        """Validates a gang against this cluster's levels and compiles it (once: a compiled
        `crdkit._placer.Gang` is returned as it is, and every method taking a gang takes it).

        ``milli``: tasks' requests already in milli-units, by task name, used instead of
        parsing those tasks' quantity strings again (see `crdkit.placer.models.compile_gang`).
        """
        if isinstance(gang, _placer.Gang):
            return gang
        model = validated(Gang, gang, path)
        return compile_gang(model, self._levels, self._parse, path, milli=milli)

    def place(self, gang: GangInput, policy: Policy = DEFAULT_POLICY) -> Placement:
        """Where `gang` goes now. The cluster is unchanged."""
        _check_policy(policy)
        return self._place_compiled(self.compile(gang), policy)

    async def place_async(self, gang: GangInput, policy: Policy = DEFAULT_POLICY) -> Placement:
        """`place` on a worker thread, so the event loop keeps running meanwhile."""
        _check_policy(policy)
        compiled = self.compile(gang)
        import asyncio  # already loaded wherever a coroutine runs; not for synchronous users

        return await asyncio.to_thread(self._place_compiled, compiled, policy)

    def place_all(
        self, gangs: Iterable[GangInput], policy: Policy = DEFAULT_POLICY
    ) -> list[Placement]:
        """Places a batch: higher `priority` first, then input order; later gangs see the pods
        of earlier ones. Results come in that placement order. The cluster is unchanged."""
        _check_policy(policy)
        compiled = [self.compile(gang, f"gangs[{i}]") for i, gang in enumerate(gangs)]
        return [_placement(outcome) for outcome in self._engine.place_all(compiled, policy)]

    async def place_all_async(
        self, gangs: Iterable[GangInput], policy: Policy = DEFAULT_POLICY
    ) -> list[Placement]:
        """`place_all` on a worker thread."""
        batch = list(gangs)
        import asyncio

        return await asyncio.to_thread(self.place_all, batch, policy)

    def place_all_records(
        self, gangs: Sequence[_placer.Gang], policy: Policy = DEFAULT_POLICY
    ) -> list[_placer.Outcome]:
        """`place_all` for compiled gangs, answered with the engine's own records: no contract
        model is built for the answer (a scheduler reads it and moves on)."""
        _check_policy(policy)
        return self._engine.place_all(list(gangs), policy)

    async def place_all_records_async(
        self, gangs: Sequence[_placer.Gang], policy: Policy = DEFAULT_POLICY
    ) -> list[_placer.Outcome]:
        """`place_all_records` on a worker thread."""
        import asyncio

        return await asyncio.to_thread(self.place_all_records, list(gangs), policy)

    def assume(self, placement: Placement, gang: GangInput | None = None) -> None:
        """Adds a placement's pods to the nodes' usage (all or nothing).

        A `Placement` from `place` knows its gang; one loaded from JSON needs its `gang`.
        """
        held = self._held(placement, gang)
        if held is not None:
            self._engine.assume(*held)

    def release(self, placement: Placement, gang: GangInput | None = None) -> None:
        """Removes a placement's pods from the nodes' usage (all or nothing, never negative)."""
        held = self._held(placement, gang)
        if held is not None:
            self._engine.release(*held)

    def _held(
        self, placement: Placement, gang: GangInput | None
    ) -> tuple[_placer.Gang, list[_placer.Assignment]] | None:
        """The compiled gang and the assignments of a placement; None when it has no pods."""
        record = placement._gang if gang is None else self.compile(gang)
        known = set() if record is None else {task.name for task in record.tasks}
        assignments = []
        for index, assignment in enumerate(placement.assignments):
            if assignment.task not in known:
                raise ValueError(
                    f"placement.assignments[{index}].task: requests of task "
                    f'"{assignment.task}" unknown; pass the gang'
                )
            assignments.append(
                _placer.Assignment(assignment.task, assignment.node, assignment.count)
            )
        if record is None:
            return None
        return record, assignments

    def _place_compiled(self, gang: _placer.Gang, policy: str = DEFAULT_POLICY) -> Placement:
        return _placement(self._engine.place(gang, policy))

    def __len__(self) -> int:
        """The number of nodes."""
        return len(self._engine)


def _placement(outcome: _placer.Outcome) -> Placement:
    """The contract's `Placement` for an engine's outcome (pydantic reads the record's fields)."""
    placement = Placement.model_validate(outcome, from_attributes=True)
    placement._gang = outcome.request
    return placement


def _milli_items(milli: Mapping[str, int], field: str) -> list[tuple[str, int]]:
    items = []
    for resource, amount in milli.items():
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
            raise ValueError(
                f"{field}.{resource}: expected a non-negative integer of milli-units, "
                f"got {amount!r}"
            )
        items.append((resource, amount))
    return items


def _pod_item(
    node: str, milli: Mapping[str, int], count: int
) -> tuple[str, list[tuple[str, int]], int]:
    return (node, _milli_items(milli, "milli"), _count(count))


def _count(count: int) -> int:
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count: expected a positive integer, got {count!r}")
    return count


def _check_policy(policy: str) -> None:
    if policy not in POLICIES:
        raise ValueError(f'policy: unknown policy "{policy}" (one of {", ".join(POLICIES)})')


class _ReferenceEngineAdapter:
    """`ReferenceEngine` behind the API of `crdkit._placer.Engine`: it takes the same compiled
    records and answers with the same `Outcome` records."""

    def __init__(
        self, levels: Sequence[str], implicit_host: bool, search_budget: int | None
    ) -> None:
        # Imported here: the pure-Python engine costs start-up time that `Cluster` users and
        # `crdkit place` should not pay.
        from crdkit.placer.reference import SEARCH_BUDGET, ReferenceEngine

        self.levels = list(levels)
        self._engine = ReferenceEngine(levels, implicit_host, search_budget or SEARCH_BUDGET)

    def add_node(self, node: _placer.Node) -> None:
        self._engine.add_node(node)

    def add_nodes(self, nodes: list[_placer.Node]) -> None:
        for node in nodes:
            self.add_node(node)

    def update_node(self, node: _placer.Node, keep_used: bool = False) -> None:
        self._engine.update_node(node, keep_used)

    def remove_node(self, name: str) -> None:
        self._engine.remove_node(name)

    def place(self, gang: _placer.Gang, policy: str = DEFAULT_POLICY) -> _placer.Outcome:
        self._check_levels(gang)
        return self._outcome(gang, self._engine.place(gang, policy))

    def place_all(
        self, gangs: list[_placer.Gang], policy: str = DEFAULT_POLICY
    ) -> list[_placer.Outcome]:
        for gang in gangs:
            self._check_levels(gang)
        placed = self._engine.place_all(gangs, policy)
        return [self._outcome(gangs[index], raw) for index, raw in placed]

    def assume(self, gang: _placer.Gang, assignments: list[_placer.Assignment]) -> None:
        self._engine.assume(_items(gang, assignments))

    def release(self, gang: _placer.Gang, assignments: list[_placer.Assignment]) -> None:
        self._engine.release(_items(gang, assignments))

    def add_pods(self, items: list[tuple[str, list[tuple[str, int]], int]]) -> None:
        self._engine.assume([(node, dict(milli), count) for node, milli, count in items])

    def remove_pods(self, items: list[tuple[str, list[tuple[str, int]], int]]) -> None:
        self._engine.release([(node, dict(milli), count) for node, milli, count in items])

    def node_used(self, name: str) -> dict[str, int] | None:
        return self._engine.node_used(name)

    def used(self) -> dict[str, dict[str, int]]:
        return self._engine.used()

    def __len__(self) -> int:
        return len(self._engine)

    def _check_levels(self, gang: _placer.Gang) -> None:
        if gang.levels != self.levels:
            raise ValueError(
                f"gang: compiled for the levels [{', '.join(gang.levels)}], "
                f"not this cluster's [{', '.join(self.levels)}]"
            )

    def _outcome(self, gang: _placer.Gang, raw: RawOutcome) -> _placer.Outcome:
        status, assignments, level, domain, reason, fit = raw
        names = [task.name for task in gang.tasks]
        return _placer.Outcome(
            gang,
            status=status,
            assignments=[_placer.Assignment(names[t], node, n) for t, node, n in assignments],
            level=None if level is None else self.levels[level],
            domain=dict(zip(self.levels, domain, strict=False)),
            reason=reason,
            fit=None if fit is None else _placer.Fit(*fit),
        )


def _items(
    gang: _placer.Gang, assignments: list[_placer.Assignment]
) -> list[tuple[str, Mapping[str, int], int]]:
    requests = {task.name: task.requests for task in gang.tasks}
    return [(a.node, requests[a.task], a.count) for a in assignments]


class ReferenceCluster(Cluster):
    """The same API over the pure-Python reference engine (`crdkit.placer.reference`)."""

    from crdkit.placer import quantity as _quantity

    _parse: QuantityParser = staticmethod(_quantity.parse_quantity)

    def _make_engine(
        self, levels: Sequence[str], implicit_host: bool, search_budget: int | None
    ) -> _Engine:
        return _ReferenceEngineAdapter(levels, implicit_host, search_budget)
