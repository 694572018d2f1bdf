"""`Cluster`: the cluster state and the placer's Python API, backed by the Rust core.

The class validates input against the contract (docs/placement-io.md), hands compiled records
to an engine and turns the engine's raw answer into a `Placement`. The Rust engine
(`crdkit._placer.Engine`) releases the GIL while it works; `place_async` runs it on a worker
thread so an event loop keeps serving while a decision is made. `crdkit.placer.reference`
defines `ReferenceCluster`, the same API over the pure-Python engine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from crdkit import _placer
from crdkit.placer.models import (
    HOSTNAME_LEVEL,
    Assignment,
    ClusterSnapshot,
    CompiledGang,
    CompiledNode,
    Fit,
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
from crdkit.placer.reference import POLICIES, RawOutcome, ReferenceEngine

__all__ = ["Cluster", "Policy", "ReferenceCluster"]

Policy = Literal["best-fit", "least-free", "binpack"]
"""How domains and nodes are ranked: see `crdkit.placer.reference` for the definitions."""

Items = list[tuple[str, Mapping[str, int], int]]
GangInput = Gang | Mapping[str, Any]
NodeInput = NodeSpec | Mapping[str, Any]


class _Engine(Protocol):
    def add_node(self, node: CompiledNode) -> None: ...
    def update_node(self, node: CompiledNode) -> None: ...
    def remove_node(self, name: str) -> None: ...
    def place(self, gang: CompiledGang, policy: str = ...) -> RawOutcome: ...
    def assume(self, items: Items) -> None: ...
    def release(self, items: Items) -> None: ...
    def used(self) -> dict[str, dict[str, int]]: ...
    def __len__(self) -> int: ...


class _RustEngine:
    """Adapts `crdkit._placer.Engine` (which takes plain tuples) to the engine protocol."""

    def __init__(self, levels: Sequence[str], implicit_host: bool) -> None:
        self._engine = _placer.Engine(list(levels), implicit_host)

    def add_node(self, node: CompiledNode) -> None:
        self._engine.add_node(node.as_tuple())

    def add_nodes(self, nodes: Sequence[CompiledNode]) -> None:
        self._engine.add_nodes([node.as_tuple() for node in nodes])

    def update_node(self, node: CompiledNode) -> None:
        self._engine.update_node(node.as_tuple())

    def remove_node(self, name: str) -> None:
        self._engine.remove_node(name)

    def place(self, gang: CompiledGang, policy: str = "best-fit") -> RawOutcome:
        raw = self._engine.place(gang.as_tuple(), policy)
        status, assignments, level, domain, reason, fit = raw
        return (status, list(assignments), level, list(domain), reason, fit)

    def assume(self, items: Items) -> None:
        self._engine.assume([(node, dict(req), count) for node, req, count in items])

    def release(self, items: Items) -> None:
        self._engine.release([(node, dict(req), count) for node, req, count in items])

    def used(self) -> dict[str, dict[str, int]]:
        return {name: dict(amounts) for name, amounts in self._engine.used()}

    def __len__(self) -> int:
        return len(self._engine)


class Cluster:
    """A cluster's nodes and usage, and where gangs of pods go in it (the Rust core).

    Input is a contract document (a dict, a model, or for `from_snapshot` a JSON/YAML file);
    bad input raises `ValueError` whose one line names the field. Placing never changes the
    state: call `assume` once the pods are bound and `release` when they are gone.
    """

    _parse: QuantityParser = staticmethod(_placer.parse_quantity)

    def __init__(self, levels: Sequence[str] = (), nodes: Iterable[NodeInput] = ()) -> None:
        snapshot = validated(
            ClusterSnapshot, {"levels": list(levels), "nodes": list(nodes)}, "cluster"
        )
        self._levels, compiled = compile_snapshot(snapshot, self._parse)
        implicit = not snapshot.levels or snapshot.levels[-1] != HOSTNAME_LEVEL
        self._engine: _Engine = self._make_engine(self._levels, implicit)
        self._add_all(compiled)

    @classmethod
    def from_snapshot(cls, snapshot: ClusterSnapshot | Mapping[str, Any] | str | Path) -> Cluster:
        """A cluster from a snapshot model, dict, or JSON/YAML file path."""
        if isinstance(snapshot, str | Path):
            snapshot = load_document(snapshot)
        model = validated(ClusterSnapshot, snapshot, "cluster")
        return cls(model.levels, model.nodes)

    def _make_engine(self, levels: Sequence[str], implicit_host: bool) -> _Engine:
        return _RustEngine(levels, implicit_host)

    def _add_all(self, nodes: Sequence[CompiledNode]) -> None:
        engine = self._engine
        if isinstance(engine, _RustEngine):
            engine.add_nodes(nodes)  # one call, one GIL release, for a whole snapshot
        else:
            for node in nodes:
                engine.add_node(node)

    @property
    def levels(self) -> list[str]:
        """The effective levels, widest first, the per-node level last."""
        return list(self._levels)

    def add_node(self, node: NodeInput) -> None:
        """Adds a node (a `NodeSpec` or its dict); its name must be new."""
        spec = validated(NodeSpec, node, "node")
        self._engine.add_node(compile_node(spec, self._parse, "node"))

    def update_node(self, node: NodeInput) -> None:
        """Replaces the node of the same name: labels, capacity, usage, taints and flags."""
        spec = validated(NodeSpec, node, "node")
        self._engine.update_node(compile_node(spec, self._parse, "node"))

    def remove_node(self, name: str) -> None:
        """Removes a node by name."""
        self._engine.remove_node(name)

    def used(self) -> dict[str, dict[str, int]]:
        """Every node's usage in milli-units (zero amounts left out), for inspection and tests."""
        return self._engine.used()

    def compile(self, gang: GangInput, path: str = "gang") -> CompiledGang:
        """Validates a gang against this cluster's levels."""
        return compile_gang(validated(Gang, gang, path), self._levels, self._parse, path)

    def place(self, gang: GangInput, policy: Policy = "best-fit") -> Placement:
        """Where `gang` goes now. The cluster is unchanged."""
        _check_policy(policy)
        return self._place_compiled(self.compile(gang), policy)

    async def place_async(self, gang: GangInput, policy: Policy = "best-fit") -> Placement:
        """`place` on a worker thread, so the event loop keeps running meanwhile."""
        _check_policy(policy)
        compiled = self.compile(gang)
        return await asyncio.to_thread(self._place_compiled, compiled, policy)

    def place_all(self, gangs: Iterable[GangInput], policy: Policy = "best-fit") -> list[Placement]:
        """Places a batch: higher `priority` first, then input order; later gangs see the pods
        of earlier ones. Results come in that placement order. The cluster is unchanged."""
        _check_policy(policy)
        compiled = [self.compile(gang, f"gangs[{i}]") for i, gang in enumerate(gangs)]
        order = sorted(range(len(compiled)), key=lambda i: (-compiled[i].priority, i))
        results: list[Placement] = []
        held: list[Items] = []
        try:
            for index in order:
                placement = self._place_compiled(compiled[index], policy)
                results.append(placement)
                if placement.assignments:
                    items = self._items(placement, None)
                    self._engine.assume(items)
                    held.append(items)
        finally:
            for items in reversed(held):
                self._engine.release(items)
        return results

    async def place_all_async(
        self, gangs: Iterable[GangInput], policy: Policy = "best-fit"
    ) -> list[Placement]:
        """`place_all` on a worker thread."""
        batch = list(gangs)
        return await asyncio.to_thread(self.place_all, batch, policy)

    def assume(self, placement: Placement, gang: GangInput | None = None) -> None:
        """Adds a placement's pods to the nodes' usage (all or nothing).

        A `Placement` from `place` knows its requests; one loaded from JSON needs its `gang`.
        """
        self._engine.assume(self._items(placement, gang))

    def release(self, placement: Placement, gang: GangInput | None = None) -> None:
        """Removes a placement's pods from the nodes' usage (all or nothing, never negative)."""
        self._engine.release(self._items(placement, gang))

    def _items(self, placement: Placement, gang: GangInput | None) -> Items:
        requests = dict(placement.requests)
        if gang is not None:
            compiled = self.compile(gang)
            requests = {task.name: dict(task.requests) for task in compiled.tasks}
        items: Items = []
        for index, assignment in enumerate(placement.assignments):
            if assignment.task not in requests:
                raise ValueError(
                    f"placement.assignments[{index}].task: requests of task "
                    f'"{assignment.task}" unknown; pass the gang'
                )
            items.append((assignment.node, requests[assignment.task], assignment.count))
        return items

    def _place_compiled(self, gang: CompiledGang, policy: str = "best-fit") -> Placement:
        status, raw_assignments, level, domain, reason, fit = self._engine.place(gang, policy)
        names = [task.name for task in gang.tasks]
        placed = dict.fromkeys(names, 0)
        assignments = []
        for task, node, count in raw_assignments:
            placed[names[task]] += count
            assignments.append(Assignment(task=names[task], node=node, count=count))
        placement = Placement(
            gang=gang.name,
            status=status,
            level=None if level is None else self._levels[level],
            domain=dict(zip(self._levels, domain, strict=False)),
            placed=placed,
            assignments=assignments,
            reason=reason,
            fit=None
            if fit is None
            else Fit(best_domain=fit[0], fits=fit[1], wants=fit[2], unit=fit[3]),
        )
        placement._requests = {task.name: dict(task.requests) for task in gang.tasks}
        return placement

    def __len__(self) -> int:
        """The number of nodes."""
        return len(self._engine)


def _check_policy(policy: str) -> None:
    if policy not in POLICIES:
        raise ValueError(f'policy: unknown policy "{policy}" (one of {", ".join(POLICIES)})')


class ReferenceCluster(Cluster):
    """The same API over the pure-Python reference engine (`crdkit.placer.reference`)."""

    from crdkit.placer import quantity as _quantity

    _parse: QuantityParser = staticmethod(_quantity.parse_quantity)

    def _make_engine(self, levels: Sequence[str], implicit_host: bool) -> _Engine:
        return ReferenceEngine(levels, implicit_host)
