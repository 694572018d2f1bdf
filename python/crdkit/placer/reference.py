"""The pure-Python reference placer: the placement rules of docs/placement-io.md in plain code.

It is written to be read, not to be fast; the Rust core (`crdkit._placer`) implements the same
rules with incremental aggregates, and a differential test keeps the two identical.

Vocabulary. The effective levels are the snapshot's levels plus the implicit per-node level
(`kubernetes.io/hostname`). A domain at depth ``d`` is identified by its path, the tuple of its
label values at levels ``0..d``. Nodes sit at depth ``L`` (the number of effective levels) with
the path of their hostname domain plus their own name. A node that lacks a label for some level
is *loose*: it is outside the tree and only takes unconstrained pods without slices.

The rules, for one task ("ask") of ``c`` units, where a unit is one pod or, for a task with a
slice of ``k`` pods at level ``s``, one slice:

1. ``fit(node)`` is how many pods of the task the node takes: the minimum over requested
   resources of ``free // request`` (a missing resource has 0 free), and of free ``pods`` when the
   node has that resource; 0 when a filter refuses the node; at most `UNLIMITED`.
2. A domain's unit capacity is ``pods // k`` at depth ``>= s`` (``pods`` summed over its nodes) and
   the sum of its children's unit capacities above ``s``. Capacity never grows going down.
3. ``place_in(E, c)``: among the domains and nodes inside ``E`` (``E`` included), take the deepest
   depth where some entry holds ``c`` units, and there the best fit: least capacity, then path.
   A node takes the pods; a domain spreads them over its children (rule 4). Once a slice task
   reaches depth ``>= s`` it becomes ``c * k`` plain pods.
4. ``spread(E, c)``: as few children as possible: take the largest (capacity descending, then path)
   while the next largest does not hold the remainder, then the best fit for the remainder. Fill the
   chosen children fullest first (capacity ascending, then path), each up to its capacity, and
   place each child's share with rule 3. Nodes with an untolerated `PreferNoSchedule` taint sort
   after the others whenever nodes are ranked.
5. A group of tasks (the gang's tasks without their own topology, or one task with its own):
   from the deepest depth up to the `required` level (or the top), the entries that hold every
   task alone are tried in best-fit order (sum of the tasks' capacities, then path) by placing the
   tasks one after another inside, and the first entry that takes them all wins. If none does,
   `required` fails; `preferred` and `unconstrained` place each task in turn with rule 3 from the
   whole cluster, whose children are the top-level domains and, for tasks that allow it, the loose
   nodes.
6. The gang: the group first, then the tasks with their own topology in order; all or nothing.
   When that fails and some task has ``minAvailable < replicas``, once more with every task at its
   ``minAvailable``. `place` never changes the cluster; `assume` does.
7. Reasons (from the last attempt): ``required L: the best <level> fits F of W <task> pods|slices
   (<domain>)`` for the first task that no single domain of ``L`` holds, or ``required L: no
   <level> holds all of <tasks> together``; ``preferred L:`` or ``unconstrained:`` followed by
   ``the cluster fits F of W <task> pods|slices`` when the whole cluster cannot hold a task.

Policies change what "best fit" and "fullest" mean (rules 3, 4 and 5) and nothing else; the
choice of how many children to use in rule 4 is the same under every policy. With ``R`` the
resources the task requests:

- ``best-fit`` (default): an entry's unit capacity for this task (less is better).
- ``least-free``: the entry's free share, ``sum over R of 10**6 * free // allocatable`` summed over
  its schedulable nodes (less is fuller, so better).
- ``binpack``: Volcano's weighted-utilisation score for nodes, every weight 1:
  ``sum over R of 10**6 * (used + request) // allocatable``, divided by the number of terms
  (higher is better); domains rank as with ``best-fit``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from crdkit.placer.models import CompiledGang, CompiledNode, CompiledTask

__all__ = ["POD", "POLICIES", "UNLIMITED", "RawFit", "RawOutcome", "ReferenceEngine"]

POLICIES = ("best-fit", "least-free", "binpack")
"""The ranking policies, `best-fit` first (the default)."""

UNLIMITED = 1 << 40
"""The fit of a node that no request limits (all-zero requests and no `pods` resource)."""
POD = 1000
"""One pod, in milli-units of the `pods` resource."""

RawFit = tuple[str | None, int, int, str]
"""(best domain, fits, wants, unit)."""
RawOutcome = tuple[
    str, list[tuple[int, str, int]], int | None, list[str], str | None, RawFit | None
]
"""(status, [(task index, node, count)], level index, domain values, reason, fit)."""

Path = tuple[str, ...]


class _Unschedulable(Exception):
    """A gang attempt failed; the message is the contract's one-line reason."""

    def __init__(self, reason: str, fit: RawFit | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fit = fit


@dataclass
class _Node:
    spec: CompiledNode
    used: dict[str, int]
    path: Path | None  # label values at every effective level; None for a loose node

    def free(self, resource: str) -> int:
        return self.spec.allocatable.get(resource, 0) - self.used.get(resource, 0)


@dataclass(frozen=True)
class _Ask:
    """One task to place now: `count` units of `k` pods, each unit inside one depth-`s` domain."""

    index: int
    task: CompiledTask
    count: int
    k: int
    s: int
    loose_ok: bool

    def plain(self) -> _Ask:
        return _Ask(self.index, self.task, self.count * self.k, 1, self.s, self.loose_ok)

    @property
    def unit_word(self) -> str:
        return "slices" if self.k > 1 else "pods"


@dataclass
class _Capacities:
    """One task's capacities: per depth, entry path -> (pods, units); plus loose node fits."""

    units: list[dict[Path, int]] = field(default_factory=list)
    pods: list[dict[Path, int]] = field(default_factory=list)
    loose: dict[str, int] = field(default_factory=dict)
    penalty: dict[Path, int] = field(default_factory=dict)  # node path -> 0 or 1
    rank: dict[Path, int] = field(default_factory=dict)  # policy rank of domains and nodes
    loose_rank: dict[str, int] = field(default_factory=dict)


def _tolerates(
    tolerations: Iterable[tuple[str, str, str, str | None]], taint: tuple[str, str, str]
) -> bool:
    key, value, effect = taint
    for t_key, operator, t_value, t_effect in tolerations:
        if t_effect is not None and t_effect != effect:
            continue
        if operator == "Exists" and (t_key in ("", key)):
            return True
        if operator == "Equal" and t_key == key and t_value == value:
            return True
    return False


class ReferenceEngine:
    """Cluster state and the placement rules, in pure Python."""

    def __init__(self, levels: Sequence[str], implicit_host: bool) -> None:
        self.levels = list(levels)  # effective levels, the per-node level included
        self.implicit_host = implicit_host
        self.nodes: dict[str, _Node] = {}
        self._log: list[tuple[str, Mapping[str, int], int]] = []
        self._policy = "best-fit"

    # --- cluster state ---------------------------------------------------------------------

    def _path(self, node: CompiledNode) -> Path | None:
        named = self.levels[:-1] if self.implicit_host else self.levels
        values = [node.labels.get(level) for level in named]
        if any(value is None for value in values):
            return None
        path = tuple(v for v in values if v is not None)
        return (*path, node.name) if self.implicit_host else path

    def add_node(self, node: CompiledNode) -> None:
        if node.name in self.nodes:
            raise ValueError(f'node.name: node "{node.name}" already exists')
        self.nodes[node.name] = _Node(node, dict(node.used), self._path(node))

    def update_node(self, node: CompiledNode) -> None:
        if node.name not in self.nodes:
            raise ValueError(f'node.name: no node "{node.name}"')
        self.nodes[node.name] = _Node(node, dict(node.used), self._path(node))

    def remove_node(self, name: str) -> None:
        if self.nodes.pop(name, None) is None:
            raise ValueError(f'name: no node "{name}"')

    def used(self) -> dict[str, dict[str, int]]:
        """Every node's usage, zero entries left out (for comparing states)."""
        return {
            name: {r: v for r, v in sorted(node.used.items()) if v}
            for name, node in sorted(self.nodes.items())
        }

    def _apply(self, node: str, requests: Mapping[str, int], count: int, sign: int) -> None:
        used = self.nodes[node].used
        for resource, milli in requests.items():
            if resource != "pods" and milli:
                used[resource] = used.get(resource, 0) + sign * milli * count
        used["pods"] = used.get("pods", 0) + sign * POD * count

    def _check_items(self, items: Sequence[tuple[str, Mapping[str, int], int]], sign: int) -> None:
        """Every node must exist; a release must not take any usage below zero (summed over
        all items, since several may name one node)."""
        for index, (node, _, _) in enumerate(items):
            if node not in self.nodes:
                raise ValueError(f'placement.assignments[{index}].node: no node "{node}"')
        if sign > 0:
            return
        totals: dict[tuple[str, str], int] = {}
        for index, (node, requests, count) in enumerate(items):
            amounts = [(r, m) for r, m in requests.items() if r != "pods" and m]
            for resource, milli in [*amounts, ("pods", POD)]:
                key = (node, resource)
                totals[key] = totals.get(key, 0) + milli * count
                if self.nodes[node].used.get(resource, 0) < totals[key]:
                    raise ValueError(
                        f"placement.assignments[{index}]: releasing it would make {resource} "
                        f'used on node "{node}" negative'
                    )

    def __len__(self) -> int:
        return len(self.nodes)

    def assume(self, items: Sequence[tuple[str, Mapping[str, int], int]]) -> None:
        self._check_items(items, 1)
        for node, requests, count in items:
            self._apply(node, requests, count, 1)

    def release(self, items: Sequence[tuple[str, Mapping[str, int], int]]) -> None:
        self._check_items(items, -1)
        for node, requests, count in items:
            self._apply(node, requests, count, -1)

    # --- capacities (rules 1 and 2) --------------------------------------------------------

    def _fit(self, node: _Node, task: CompiledTask) -> int:
        spec = node.spec
        if spec.unschedulable or not spec.ready:
            return 0
        if any(spec.labels.get(key) != value for key, value in task.node_selector):
            return 0
        for taint in spec.taints:
            if taint[2] != "PreferNoSchedule" and not _tolerates(task.tolerations, taint):
                return 0
        fit = UNLIMITED
        for resource, milli in task.requests.items():
            if resource != "pods" and milli > 0:
                fit = min(fit, max(0, node.free(resource)) // milli)
        if "pods" in spec.allocatable:
            fit = min(fit, max(0, node.free("pods")) // POD)
        return fit

    def _penalty(self, node: _Node, task: CompiledTask) -> int:
        return int(
            any(
                taint[2] == "PreferNoSchedule" and not _tolerates(task.tolerations, taint)
                for taint in node.spec.taints
            )
        )

    def _capacities(self, ask: _Ask) -> _Capacities:
        depth_of_nodes = len(self.levels)
        caps = _Capacities(
            units=[{} for _ in range(depth_of_nodes + 1)],
            pods=[{} for _ in range(depth_of_nodes + 1)],
        )
        for node in self.nodes.values():
            if node.path is None:
                if ask.loose_ok:
                    caps.loose[node.spec.name] = self._fit(node, ask.task)
                continue
            fit = self._fit(node, ask.task)
            full = (*node.path, node.spec.name)
            caps.pods[depth_of_nodes][full] = fit
            caps.penalty[full] = self._penalty(node, ask.task)
            for depth in range(depth_of_nodes):
                prefix = node.path[: depth + 1]
                caps.pods[depth][prefix] = caps.pods[depth].get(prefix, 0) + fit
        for depth in range(depth_of_nodes, -1, -1):
            for path, pods in caps.pods[depth].items():
                if depth >= ask.s:
                    caps.units[depth][path] = pods // ask.k
                else:
                    caps.units[depth][path] = 0
            if depth < ask.s:
                for child, units in caps.units[depth + 1].items():
                    caps.units[depth][child[: depth + 1]] += units
        if self._policy == "least-free":
            self._least_free_ranks(ask, caps)
        elif self._policy == "binpack":
            self._binpack_ranks(ask, caps)
        return caps

    @staticmethod
    def _requested(task: CompiledTask) -> list[str]:
        return [r for r, milli in task.requests.items() if milli > 0 and r != "pods"]

    def _least_free_ranks(self, ask: _Ask, caps: _Capacities) -> None:
        resources = self._requested(ask.task)
        free: dict[Path, dict[str, int]] = {}
        allocatable: dict[Path, dict[str, int]] = {}

        def share(f: dict[str, int], a: dict[str, int]) -> int:
            return sum(10**6 * f.get(r, 0) // a[r] for r in resources if a.get(r, 0) > 0)

        for node in self.nodes.values():
            schedulable = not node.spec.unschedulable and node.spec.ready
            f = {r: max(0, node.free(r)) if schedulable else 0 for r in resources}
            a = {r: node.spec.allocatable.get(r, 0) if schedulable else 0 for r in resources}
            if node.path is None:
                caps.loose_rank[node.spec.name] = share(f, a)
                continue
            keys = [node.path[: d + 1] for d in range(len(self.levels))]
            for key in [*keys, (*node.path, node.spec.name)]:
                totals_f, totals_a = free.setdefault(key, {}), allocatable.setdefault(key, {})
                for r in resources:
                    totals_f[r] = totals_f.get(r, 0) + f[r]
                    totals_a[r] = totals_a.get(r, 0) + a[r]
        for key in free:
            caps.rank[key] = share(free[key], allocatable[key])

    def _binpack_score(self, node: _Node, task: CompiledTask) -> int:
        terms = [
            10**6 * (node.used.get(r, 0) + task.requests[r]) // node.spec.allocatable[r]
            for r in self._requested(task)
            if node.spec.allocatable.get(r, 0) > 0
        ]
        return sum(terms) // len(terms) if terms else 0

    def _binpack_ranks(self, ask: _Ask, caps: _Capacities) -> None:
        for node in self.nodes.values():
            rank = -self._binpack_score(node, ask.task)
            if node.path is None:
                caps.loose_rank[node.spec.name] = rank
            else:
                caps.rank[(*node.path, node.spec.name)] = rank

    def _rank(self, caps: _Capacities, path: Path, units: int, loose: bool = False) -> int:
        """The policy's "fit" of an entry: less is better (rules 3 to 5)."""
        if self._policy == "best-fit":
            return units
        if loose:
            return caps.loose_rank[path[0]]
        if self._policy == "binpack" and len(path) <= len(self.levels):
            return units  # a domain: binpack ranks only nodes
        return caps.rank[path]

    # --- rules 3 and 4 ---------------------------------------------------------------------

    def _assign(self, node: str, ask: _Ask, pods: int, out: list[tuple[int, str, int]]) -> None:
        self._apply(node, ask.task.requests, pods, 1)
        self._log.append((node, ask.task.requests, pods))
        out.append((ask.index, node, pods))

    def _place_in(
        self, path: Path, ask: _Ask, count: int, caps: _Capacities, out: list[tuple[int, str, int]]
    ) -> None:
        """Rule 3: `count` units of `ask` inside the entry at `path` (the root is `()`)."""
        depth = len(path) - 1
        nodes_depth = len(self.levels)
        if ask.k > 1 and depth >= ask.s:
            ask, count = ask.plain(), count * ask.k
        if depth == nodes_depth:
            self._assign(path[-1], ask, count, out)
            return
        table = caps.pods if ask.k == 1 else caps.units
        for d in range(nodes_depth, depth, -1):
            candidates = [
                (caps.penalty.get(p, 0) if d == nodes_depth else 0, self._rank(caps, p, units), p)
                for p, units in table[d].items()
                if p[: depth + 1] == path and units >= count
            ]
            if candidates:
                best = min(candidates)[2]
                self._place_in(best, ask, count, caps, out)
                return
        self._spread(path, ask, count, caps, out)

    def _spread(
        self, path: Path, ask: _Ask, count: int, caps: _Capacities, out: list[tuple[int, str, int]]
    ) -> None:
        """Rule 4: over as few children of `path` as possible, fullest first."""
        depth = len(path) - 1
        nodes_depth = len(self.levels)
        table = caps.pods if ask.k == 1 else caps.units
        # (penalty, capacity, kind, key, rank): kind 1 marks loose nodes, children of the root.
        children = [
            (
                caps.penalty.get(p, 0) if depth + 1 == nodes_depth else 0,
                units,
                0,
                p,
                self._rank(caps, p, units),
            )
            for p, units in table[depth + 1].items()
            if p[: depth + 1] == path and units > 0
        ]
        if depth == -1:
            for name, fit in caps.loose.items():
                units = fit // ask.k
                if units > 0:
                    penalty = self._penalty(self.nodes[name], ask.task)
                    rank = self._rank(caps, (name,), units, loose=True)
                    children.append((penalty, units, 1, (name,), rank))
        remaining = count
        chosen: list[tuple[int, int, int, Path, int]] = []
        by_size = sorted(children, key=lambda c: (c[0], -c[1], c[2], c[3]))
        for child in by_size:
            if child[1] >= remaining:
                break
            chosen.append(child)
            remaining -= child[1]
        else:
            raise AssertionError("spread called with too little capacity")
        rest = [c for c in children if c not in chosen and c[1] >= remaining]
        chosen.append(min(rest, key=lambda c: (c[0], c[4], c[2], c[3])))
        left = count
        for child in sorted(chosen, key=lambda c: (c[4], c[2], c[3])):
            share = min(child[1], left)
            left -= share
            if child[2] == 1:  # a loose node
                plain = ask.plain() if ask.k > 1 else ask
                self._assign(child[3][0], plain, share * ask.k, out)
            else:
                self._place_in(child[3], ask, share, caps, out)

    # --- rules 5 and 6 ---------------------------------------------------------------------

    def _ask(self, index: int, task: CompiledTask, count: int, topology_mode: str) -> _Ask:
        if task.slice is not None:
            s, k = task.slice
            return _Ask(index, task, count // k, k, s, False)
        return _Ask(index, task, count, 1, len(self.levels), topology_mode == "unconstrained")

    def _root_units(self, caps: _Capacities, ask: _Ask) -> int:
        total = sum(caps.units[0].values())
        return total + sum(fit // ask.k for fit in caps.loose.values())

    def _place_group(
        self,
        asks: list[_Ask],
        mode: str,
        level: int | None,
        out: list[tuple[int, str, int]],
    ) -> None:
        nodes_depth = len(self.levels)
        shallowest = level if mode == "required" and level is not None else 0
        all_caps = [self._capacities(ask) for ask in asks]
        for depth in range(nodes_depth, shallowest - 1, -1):
            candidates = []
            for path in all_caps[0].units[depth]:
                units = [caps.units[depth].get(path, 0) for caps in all_caps]
                if all(u >= ask.count for u, ask in zip(units, asks, strict=True)):
                    penalty = (
                        max(caps.penalty.get(path, 0) for caps in all_caps)
                        if depth == nodes_depth
                        else 0
                    )
                    rank = sum(
                        self._rank(caps, path, u) for caps, u in zip(all_caps, units, strict=True)
                    )
                    candidates.append((penalty, rank, path))
            for _, _, path in sorted(candidates):
                mark, placed = len(self._log), len(out)
                if self._try_group_in(path, asks, out):
                    return
                self._undo(mark)
                del out[placed:]
        if mode == "required":
            assert level is not None
            raise self._required_failure(asks, level, all_caps)
        for ask in asks:
            caps = self._capacities(ask)
            have = self._root_units(caps, ask)
            if have < ask.count:
                where = "" if mode == "unconstrained" else f" {self.levels[level or 0]}"
                raise _Unschedulable(
                    f"{mode}{where}: the cluster fits {have} of {ask.count} "
                    f"{ask.task.name} {ask.unit_word}",
                    (None, have, ask.count, ask.unit_word),
                )
            self._place_in((), ask, ask.count, caps, out)

    def _try_group_in(self, path: Path, asks: list[_Ask], out: list[tuple[int, str, int]]) -> bool:
        depth = len(path) - 1
        for ask in asks:
            caps = self._capacities(ask)
            if (caps.units[depth].get(path, 0)) < ask.count:
                return False
            self._place_in(path, ask, ask.count, caps, out)
        return True

    def _required_failure(
        self, asks: list[_Ask], level: int, all_caps: list[_Capacities]
    ) -> _Unschedulable:
        name = self.levels[level]
        short = name.rsplit("/", 1)[-1]
        for ask, caps in zip(asks, all_caps, strict=True):
            domains = caps.units[level]
            if domains:
                best = min(domains, key=lambda p: (-domains[p], p))
                fits, where = domains[best], best[-1]
            else:
                fits, where = 0, None
            if fits < ask.count:
                shown = where if where is not None else f"no {short} in the cluster"
                return _Unschedulable(
                    f"required {name}: the best {short} fits {fits} of {ask.count} "
                    f"{ask.task.name} {ask.unit_word} ({shown})",
                    (where, fits, ask.count, ask.unit_word),
                )
        tasks = ", ".join(ask.task.name for ask in asks)
        return _Unschedulable(f"required {name}: no {short} holds all of {tasks} together")

    def _undo(self, mark: int) -> None:
        while len(self._log) > mark:
            node, requests, pods = self._log.pop()
            self._apply(node, requests, pods, -1)

    def _attempt(self, gang: CompiledGang, counts: list[int]) -> list[tuple[int, str, int]]:
        out: list[tuple[int, str, int]] = []
        gang_mode, gang_level = gang.topology
        group = [
            self._ask(i, task, counts[i], gang_mode)
            for i, task in enumerate(gang.tasks)
            if task.topology is None
        ]
        if group:
            self._place_group(group, gang_mode, gang_level, out)
        for i, task in enumerate(gang.tasks):
            if task.topology is not None:
                mode, level = task.topology
                self._place_group([self._ask(i, task, counts[i], mode)], mode, level, out)
        return out

    def place(self, gang: CompiledGang, policy: str = "best-fit") -> RawOutcome:
        if policy not in POLICIES:
            raise ValueError(f"policy: unknown policy {policy!r} (one of {', '.join(POLICIES)})")
        self._policy = policy
        attempts = [("placed", [task.replicas for task in gang.tasks])]
        if any(task.min_available < task.replicas for task in gang.tasks):
            attempts.append(("minimal", [task.min_available for task in gang.tasks]))
        failure = _Unschedulable("no attempt")
        for status, counts in attempts:
            try:
                out = self._attempt(gang, counts)
            except _Unschedulable as err:
                failure = err
                continue
            finally:
                self._undo(0)
            level, domain = self._lowest_common_domain(node for _, node, _ in out)
            return (status, _merged(out), level, domain, None, None)
        return ("unschedulable", [], None, [], failure.reason, failure.fit)

    def _lowest_common_domain(self, names: Iterable[str]) -> tuple[int | None, list[str]]:
        common: Path | None = None
        for name in names:
            path = self.nodes[name].path
            if path is None:
                return None, []
            if common is None:
                common = path
            else:
                length = 0
                while length < len(common) and common[length] == path[length]:
                    length += 1
                common = common[:length]
        if not common:
            return None, []
        return len(common) - 1, list(common)

    def place_all(
        self, gangs: Sequence[CompiledGang], policy: str = "best-fit"
    ) -> list[tuple[int, RawOutcome]]:
        """A batch: higher `priority` first, then input order, each gang seeing the pods of the
        ones placed before it; `(input index, outcome)` in that order. The cluster is unchanged
        afterwards."""
        order = sorted(range(len(gangs)), key=lambda i: (-gangs[i].priority, i))
        results: list[tuple[int, RawOutcome]] = []
        held: list[list[tuple[str, Mapping[str, int], int]]] = []
        try:
            for index in order:
                outcome = self.place(gangs[index], policy)
                results.append((index, outcome))
                tasks = gangs[index].tasks
                items = [(node, tasks[task].requests, count) for task, node, count in outcome[1]]
                if items:
                    self.assume(items)
                    held.append(items)
        finally:
            for items in reversed(held):
                self.release(items)
        return results


def _merged(out: list[tuple[int, str, int]]) -> list[tuple[int, str, int]]:
    totals: dict[tuple[int, str], int] = {}
    for task, node, count in out:
        totals[(task, node)] = totals.get((task, node), 0) + count
    return [(task, node, count) for (task, node), count in sorted(totals.items())]
