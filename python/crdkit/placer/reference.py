"""The pure-Python reference placer: the contract's placement rules in plain code.

The contract is docs/reference/placement-io.md.

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
5. The gang: from the deepest depth up to the gang's `required` level (or the top), the entries
   that hold every task alone are tried in best-fit order (sum of the tasks' capacities, then
   path). In each, first the quick way: the tasks without their own topology one after another
   with rule 3, then each task with its own topology inside the entry (its candidates are the
   entries inside it, from the deepest up to its own `required` level, tried the same way);
   when that does not take them and the gang has more than one task, the exact search (rule 8).
   The first entry that takes the gang wins. If none does, `required` fails; `preferred` and
   `unconstrained` place the shared tasks in turn with rule 3 from the whole cluster (whose
   children are the top-level domains and, for tasks that allow it, the loose nodes), then each
   task with its own topology from the whole cluster, and when that fails, the exact search over
   the whole cluster.
6. All or nothing. When the attempt fails and some task has ``minAvailable < replicas``, once
   more with every task at its ``minAvailable``. `place` never changes the cluster; `assume` does.
7. Reasons (from the last attempt): ``required L: the best <level> fits F of W <task> pods|slices
   (<domain>)`` for the first task that no single domain of ``L`` holds, or ``required L: no
   <level> holds 1 <task> pod and W <task> pods together``; ``preferred L:`` or
   ``unconstrained:`` followed by ``the cluster fits F of W <task> pods|slices`` when the whole
   cluster cannot hold a task. A task named after its unit ("pods") is not named twice.
8. The exact search inside an entry decides whether any assignment exists. The tasks go hardest
   first (larger slices, then more pods, then task order); a task with a `required` level of its
   own below the entry also picks its region, in path order. Each task gives every node of its
   region, in path order, as many pods as still fit, from the most down to none, and each slice
   group must end on whole slices; a dead end undoes the latest choice and tries one pod less
   there. Before a task starts, every remaining task must fit alone in its best region and
   their summed requests must fit in the entry's free capacity; while it chooses, every later
   task without a region must still fit alone. The first complete assignment wins. Each node
   visit is a step; past `SEARCH_BUDGET` steps the attempt fails with its own reason.

Policies change what "best fit" and "fullest" mean (rules 3, 4 and 5) and nothing else; the
choice of how many children to use in rule 4 is the same under every policy. With ``R`` the
resources the task requests:

- ``best-fit`` (default): an entry's unit capacity for this task (less is better).
- ``least-free``: the entry's free share, ``sum over R of 10**6 * free // allocatable`` summed over
  its schedulable nodes (less is fuller, so better).
- ``binpack``: Volcano's weighted-utilisation score for nodes, every weight 1:
  ``sum over R of 10**6 * (used + request) // allocatable``, divided by the number of terms
  (higher is better); domains rank as with ``best-fit``.
- ``keep-whole``: first how many free domains the entry would break, then ``best-fit``: the
  number of free domains on the entry's chain from the root, plus one for a node that is free
  itself (``broken * 2**42 + units``). A node is free when none of R is in use on it, a domain
  when every node in it is. Small jobs go where capacity is already broken, so whole leaves
  (and spines) stay whole for the gangs that need them; among those, a gang takes the whole
  domain inside a broken parent before one inside a whole parent.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from crdkit.placer.policies import DEFAULT_POLICY, POLICIES
from crdkit.placer.taints import tolerates

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from crdkit import _placer

__all__ = [
    "POD",
    "POLICIES",
    "SEARCH_BUDGET",
    "UNLIMITED",
    "RawFit",
    "RawOutcome",
    "ReferenceEngine",
]

HOSTNAME = "kubernetes.io/hostname"
"""The node-level label, left out when nodes are compared for interchangeability."""
UNLIMITED = 1 << 40
"""The fit of a node that no request limits (all-zero requests and no `pods` resource)."""
POD = 1000
"""One pod, in milli-units of the `pods` resource."""
SEARCH_BUDGET = 200_000
"""Steps (node visits) the exact search of one gang attempt may take before it gives up."""
KEEP_WHOLE_UNITS = 1 << 42
"""Keep-whole ranks by ``broken * KEEP_WHOLE_UNITS + units``: above `UNLIMITED`, so the units
of an entry never reach the next count of broken domains."""

RawFit = tuple[str | None, int, int, str]
"""(best domain, fits, wants, unit)."""
RawOutcome = tuple[
    str, list[tuple[int, str, int]], int | None, list[str], str | None, RawFit | None
]
"""(status, [(task index, node, count)], level index, domain values, reason, fit)."""

Path = tuple[str, ...]
Placed = tuple[int, str, int]
"""(task index, node, count)."""


class _Unschedulable(Exception):
    """A gang attempt failed; the message is the contract's one-line reason."""

    def __init__(self, reason: str, fit: RawFit | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fit = fit


# --- the engine reads the binding's records (`crdkit._placer.Node`, `Gang`, `Task`) ----------
# A record's getters build new Python objects on every access, so what the search reads at every
# node it visits is read once into its working objects, as the Rust core interns it: a node's
# allocatable and taints into `_Node`, a task's requests (with the per-node limits) and filters
# into `_Ask`.

Mode = Literal["required", "preferred", "unconstrained"]
Taint = tuple[str, str, str]
"""(key, value, effect), as `crdkit.placer.taints.tolerates` takes it."""
Toleration = tuple[str, str, str, str | None]
"""(key, operator, value, effect)."""


def _topology(topology: _placer.Topology) -> tuple[Mode, int | None]:
    return (topology.mode, topology.level)


LIMIT_OF_GANG = "per-node limit of the gang"
"""The resource that stands for a gang's per-node limit while it is placed (see
`_with_limits`); no Kubernetes resource name holds a space, so it meets no real one."""
LIMIT_OF_TASK = "per-node limit of task "
"""The prefix of a task's per-node limit resource; the task's index follows."""


def _is_limit(resource: str) -> bool:
    return resource == LIMIT_OF_GANG or resource.startswith(LIMIT_OF_TASK)


def _with_limits(gang: _placer.Gang) -> tuple[list[Mapping[str, int]], dict[str, int]]:
    """Each task's requests as the search sees them, and what every node holds of each limit
    resource.

    A per-node limit (``maxPerNode``) is a resource no node lists: every node has ``max`` pods'
    worth of it while the gang is placed, and each pod of a limited task takes one pod's worth,
    so fits, bounds, assign and undo keep the limit with no rule of their own. The gang's limit
    counts the pods of all its tasks together; a task's limit, its own. Placed pods never carry
    them: `assume` takes the tasks' own requests. The policies rank by those only."""
    limits: dict[str, int] = {}
    if gang.max_per_node is not None:
        limits[LIMIT_OF_GANG] = gang.max_per_node * POD
    requests: list[Mapping[str, int]] = []
    for index, task in enumerate(gang.tasks):
        extra = {LIMIT_OF_GANG: POD} if gang.max_per_node is not None else {}
        if task.max_per_node is not None:
            limits[f"{LIMIT_OF_TASK}{index}"] = task.max_per_node * POD
            extra[f"{LIMIT_OF_TASK}{index}"] = POD
        requests.append({**task.requests, **extra})
    return requests, limits


@dataclass
class _Node:
    """A node as the engine works on it: its record, its usage now, its path, and the record's
    allocatable and taints read once."""

    spec: _placer.Node
    used: dict[str, int]
    path: Path | None  # label values at every effective level; None for a loose node
    allocatable: dict[str, int] = field(init=False)
    taints: tuple[Taint, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.allocatable = self.spec.allocatable
        self.taints = tuple((t.key, t.value, t.effect) for t in self.spec.taints)

    def free(self, resource: str) -> int:
        return self.allocatable.get(resource, 0) - self.used.get(resource, 0)


@dataclass(frozen=True)
class _Demand:
    """What one task asks of every node, read once from its record per placement: its requests
    with the gang's per-node limits (see `_with_limits`) and its filters."""

    requests: Mapping[str, int]
    selector: tuple[tuple[str, str], ...]
    tolerations: tuple[Toleration, ...]
    avoid: frozenset[str]

    @classmethod
    def of(cls, task: _placer.Task, requests: Mapping[str, int]) -> _Demand:
        return cls(
            requests,
            tuple(sorted(task.node_selector.items())),
            tuple((t.key, t.operator, t.value, t.effect) for t in task.tolerations),
            frozenset(task.avoid_nodes),
        )


@dataclass(frozen=True)
class _Ask:
    """One task to place now: `count` units of `k` pods, each unit inside one depth-`s` domain."""

    index: int
    task: _placer.Task
    demand: _Demand
    count: int
    k: int
    s: int
    loose_ok: bool

    def plain(self) -> _Ask:
        return replace(self, count=self.count * self.k, k=1)

    @property
    def unit_word(self) -> str:
        return "slices" if self.k > 1 else "pods"

    def units_of(self, what: str) -> str:
        """``what`` of this task's units: "12 of 16 worker pods", or "4 of 5 pods" for a task
        named after the unit (a one-task gang's "pods")."""
        return self._named(what, self.unit_word)

    def counted(self) -> str:
        """This task's whole ask in a list: "1 master pod", "15 worker pods"."""
        word = self.unit_word
        return self._named(str(self.count), word[:-1] if self.count == 1 else word)

    def _named(self, what: str, unit: str) -> str:
        # The task's name, unless it is the unit's own ("pods"), which would read twice.
        if self.task.name in (self.unit_word, ""):
            return f"{what} {unit}"
        return f"{what} {self.task.name} {unit}"


_Choice = tuple[int, int, int, int, int, int, list[tuple[int, str, int]]]
"""(node index, pods, pods still to place, slice-group pods before, undo marks, fits changed)."""
_Held = tuple[_Node, "Path | None", int]
"""A node of the exact search's current region: (node, slice group, pods it takes now)."""


@dataclass(frozen=True)
class _Scope:
    """What one exact search works over: the entry, its nodes in path order, the loose nodes
    (when the entry is the whole cluster) and each task's own region level."""

    within: Path
    walk: list[_Node]
    loose: list[_Node]
    levels: list[int | None]
    twin: dict[str, str]  # node -> the previous node in the walk it is interchangeable with
    given: dict[str, list[int]]  # node -> pods of each task (in search order) given to it


@dataclass
class _Ahead:
    """A later task's capacity in the whole scope, kept current while an earlier task chooses
    (forward checking): its fit per node, the pods per slice group, and the total that counts
    only whole slices."""

    ask: _Ask
    fits: dict[str, int]
    group_of: dict[str, Path | None]
    groups: dict[Path | None, int]
    capacity: int

    @property
    def short(self) -> bool:
        """True when the task no longer fits even alone."""
        return self.capacity < self.ask.count * self.ask.k

    def set(self, name: str, fit: int) -> int:
        """Records a node's new fit; returns the old one (to undo with)."""
        old = self.fits[name]
        k, group = self.ask.k, self.group_of[name]
        before = self.groups[group]
        after = before + fit - old
        self.groups[group] = after
        self.capacity += after // k * k - before // k * k
        self.fits[name] = fit
        return old


@dataclass
class _Frame:
    """One task of the exact search: its regions, the nodes of the current one in walk order
    with the suffix sums of their fits, and the choices made so far (node index, pods, pods
    still to place and slice-group pods before it, undo marks)."""

    regions: list[Path | None]
    region: int = -1
    nodes: list[_Held] = field(default_factory=list)
    suffix: list[int] = field(default_factory=list)
    choices: list[_Choice] = field(default_factory=list)
    ahead: list[_Ahead] = field(default_factory=list)
    lead: list[int | None] = field(default_factory=list)  # index of each node's twin, if listed

    def closes(self, j: int) -> bool:
        """True when node `j` is the last of its slice group."""
        return j + 1 == len(self.nodes) or self.nodes[j + 1][1] != self.nodes[j][1]

    def most(self, j: int, top: int, group: int, k: int) -> int | None:
        """The most pods, at most `top`, node `j` may take: a group must end on whole slices."""
        for pods in range(top, -1, -1):
            if not self.closes(j) or (group + pods) % k == 0:
                return pods
        return None


@dataclass
class _Capacities:
    """One task's capacities: per depth, entry path -> (pods, units); plus loose node fits."""

    units: list[dict[Path, int]] = field(default_factory=list)
    pods: list[dict[Path, int]] = field(default_factory=list)
    loose: dict[str, int] = field(default_factory=dict)
    penalty: dict[Path, int] = field(default_factory=dict)  # node path -> 0 or 1
    rank: dict[Path, int] = field(default_factory=dict)  # policy rank of domains and nodes
    loose_rank: dict[str, int] = field(default_factory=dict)


def _alike_asks(asks: list[_Ask]) -> list[tuple[int, int]]:
    """Asks of plain pods that want the same thing (requests, selector, tolerations, loose
    nodes, avoided nodes) compete for one room: an entry holds them all only if it holds the
    sum of their counts. Per group of two or more: its first ask's index and that sum. A
    necessary condition, the same as the Rust core's, so both prune (and count steps) alike."""
    groups: dict[tuple[object, ...], list[int]] = {}
    for index, ask in enumerate(asks):
        if ask.k != 1:
            continue
        demand = ask.demand
        requests = tuple(
            sorted((r, m) for r, m in demand.requests.items() if m > 0 and r != "pods")
        )
        key = (requests, demand.selector, demand.tolerations, ask.loose_ok, demand.avoid)
        groups.setdefault(key, []).append(index)
    return [
        (members[0], sum(asks[i].count for i in members))
        for members in groups.values()
        if len(members) > 1
    ]


class ReferenceEngine:
    """Cluster state and the placement rules, in pure Python."""

    def __init__(
        self, levels: Sequence[str], implicit_host: bool, search_budget: int = SEARCH_BUDGET
    ) -> None:
        if search_budget < 1:
            raise ValueError("search_budget: must be at least 1")
        self.levels = list(levels)  # effective levels, the per-node level included
        self.implicit_host = implicit_host
        self.search_budget = search_budget
        self.nodes: dict[str, _Node] = {}
        self._log: list[tuple[str, Mapping[str, int], int]] = []
        self._policy = "best-fit"
        self._steps = 0
        self._walk: list[_Node] | None = None
        self._limits: dict[str, int] = {}  # per node, of the gang being placed

    # --- cluster state ---------------------------------------------------------------------

    def _path(self, node: _placer.Node) -> Path | None:
        named = self.levels[:-1] if self.implicit_host else self.levels
        values = [node.labels.get(level) for level in named]
        if any(value is None for value in values):
            return None
        path = tuple(v for v in values if v is not None)
        return (*path, node.name) if self.implicit_host else path

    def add_node(self, node: _placer.Node) -> None:
        if node.name in self.nodes:
            raise ValueError(f'node.name: node "{node.name}" already exists')
        self.nodes[node.name] = _Node(node, dict(node.used), self._path(node))

    def update_node(self, node: _placer.Node, keep_used: bool = False) -> None:
        old = self.nodes.get(node.name)
        if old is None:
            raise ValueError(f'node.name: no node "{node.name}"')
        used = dict(node.used)
        if keep_used:
            for resource, milli in old.used.items():
                used[resource] = used.get(resource, 0) + milli
        self.nodes[node.name] = _Node(node, used, self._path(node))

    def node_used(self, name: str) -> dict[str, int] | None:
        node = self.nodes.get(name)
        return None if node is None else {r: v for r, v in sorted(node.used.items()) if v}

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

    def _fit(self, node: _Node, demand: _Demand) -> int:
        spec = node.spec
        if spec.unschedulable or not spec.ready or spec.name in demand.avoid:
            return 0
        if demand.selector:
            labels = spec.labels
            if any(labels.get(key) != value for key, value in demand.selector):
                return 0
        for taint in node.taints:
            if taint[2] != "PreferNoSchedule" and not tolerates(demand.tolerations, taint):
                return 0
        fit = UNLIMITED
        for resource, milli in demand.requests.items():
            if resource != "pods" and milli > 0:
                fit = min(fit, max(0, self._free(node, resource)) // milli)
        if "pods" in node.allocatable:
            fit = min(fit, max(0, node.free("pods")) // POD)
        return fit

    def _free(self, node: _Node, resource: str) -> int:
        """The node's free amount of a resource, the per-node limits of the gang included."""
        if resource in self._limits:
            return self._limits[resource] - node.used.get(resource, 0)
        return node.free(resource)

    def _penalty(self, node: _Node, demand: _Demand) -> int:
        return int(
            any(
                taint[2] == "PreferNoSchedule" and not tolerates(demand.tolerations, taint)
                for taint in node.taints
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
                    caps.loose[node.spec.name] = self._fit(node, ask.demand)
                continue
            fit = self._fit(node, ask.demand)
            full = (*node.path, node.spec.name)
            caps.pods[depth_of_nodes][full] = fit
            caps.penalty[full] = self._penalty(node, ask.demand)
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
        elif self._policy == "keep-whole":
            self._keep_whole_ranks(ask, caps)
        return caps

    @staticmethod
    def _requested(demand: _Demand) -> list[str]:
        """The resources the task's pods request themselves (the policies rank by these)."""
        return [
            r
            for r, milli in demand.requests.items()
            if milli > 0 and r != "pods" and not _is_limit(r)
        ]

    def _least_free_ranks(self, ask: _Ask, caps: _Capacities) -> None:
        resources = self._requested(ask.demand)
        free: dict[Path, dict[str, int]] = {}
        allocatable: dict[Path, dict[str, int]] = {}

        def share(f: dict[str, int], a: dict[str, int]) -> int:
            return sum(10**6 * f.get(r, 0) // a[r] for r in resources if a.get(r, 0) > 0)

        for node in self.nodes.values():
            schedulable = not node.spec.unschedulable and node.spec.ready
            f = {r: max(0, node.free(r)) if schedulable else 0 for r in resources}
            a = {r: node.allocatable.get(r, 0) if schedulable else 0 for r in resources}
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

    def _binpack_score(self, node: _Node, demand: _Demand) -> int:
        terms = [
            10**6 * (node.used.get(r, 0) + demand.requests[r]) // node.allocatable[r]
            for r in self._requested(demand)
            if node.allocatable.get(r, 0) > 0
        ]
        return sum(terms) // len(terms) if terms else 0

    def _binpack_ranks(self, ask: _Ask, caps: _Capacities) -> None:
        for node in self.nodes.values():
            rank = -self._binpack_score(node, ask.demand)
            if node.path is None:
                caps.loose_rank[node.spec.name] = rank
            else:
                caps.rank[(*node.path, node.spec.name)] = rank

    def _keep_whole_ranks(self, ask: _Ask, caps: _Capacities) -> None:
        """Per domain and node, how many free domains (and the node itself, when free) lie on
        its chain from the root. A node is free when none of the resources the task requests
        is in use on it; a domain when every node in it is."""
        resources = self._requested(ask.demand)
        free: dict[Path, bool] = {}
        node_free: dict[Path, bool] = {}
        for node in self.nodes.values():
            its = all(node.used.get(r, 0) == 0 for r in resources)
            if node.path is None:
                caps.loose_rank[node.spec.name] = int(its)
                continue
            for depth in range(len(self.levels)):
                prefix = node.path[: depth + 1]
                free[prefix] = free.get(prefix, True) and its
            node_free[(*node.path, node.spec.name)] = its
        for prefix in free:
            caps.rank[prefix] = sum(free[prefix[: d + 1]] for d in range(len(prefix)))
        for full, its in node_free.items():
            caps.rank[full] = caps.rank[full[:-1]] + int(its)

    def _rank(self, caps: _Capacities, path: Path, units: int, loose: bool = False) -> int:
        """The policy's "fit" of an entry: less is better (rules 3 to 5)."""
        if self._policy == "best-fit":
            return units
        if self._policy == "keep-whole":
            broken = caps.loose_rank[path[0]] if loose else caps.rank[path]
            return broken * KEEP_WHOLE_UNITS + min(units, KEEP_WHOLE_UNITS - 1)
        if loose:
            return caps.loose_rank[path[0]]
        if self._policy == "binpack" and len(path) <= len(self.levels):
            return units  # a domain: binpack ranks only nodes
        return caps.rank[path]

    # --- rules 3 and 4 ---------------------------------------------------------------------

    def _assign(self, node: str, ask: _Ask, pods: int, out: list[tuple[int, str, int]]) -> None:
        self._apply(node, ask.demand.requests, pods, 1)
        self._log.append((node, ask.demand.requests, pods))
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
                    penalty = self._penalty(self.nodes[name], ask.demand)
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
            if share == 0:
                continue  # the fewest children already hold it all: nothing goes here
            if child[2] == 1:  # a loose node
                plain = ask.plain() if ask.k > 1 else ask
                self._assign(child[3][0], plain, share * ask.k, out)
            else:
                self._place_in(child[3], ask, share, caps, out)

    # --- rules 5 and 6 ---------------------------------------------------------------------

    def _ask(
        self, index: int, task: _placer.Task, demand: _Demand, count: int, topology_mode: str
    ) -> _Ask:
        if task.slice is not None:
            s, k = task.slice.level, task.slice.size
            return _Ask(index, task, demand, count // k, k, s, False)
        loose_ok = topology_mode == "unconstrained"
        return _Ask(index, task, demand, count, 1, len(self.levels), loose_ok)

    def _root_units(self, caps: _Capacities, ask: _Ask) -> int:
        total = sum(caps.units[0].values())
        return total + sum(fit // ask.k for fit in caps.loose.values())

    def _candidates(
        self, asks: list[_Ask], all_caps: list[_Capacities], depth: int, within: Path
    ) -> list[Path]:
        """The entries at `depth` inside `within` that hold every task alone, best fit first."""
        nodes_depth = len(self.levels)
        alike = _alike_asks(asks)
        candidates = []
        for path in all_caps[0].units[depth]:
            if path[: len(within)] != within:
                continue
            units = [caps.units[depth].get(path, 0) for caps in all_caps]
            if all(u >= ask.count for u, ask in zip(units, asks, strict=True)) and all(
                units[first] >= total for first, total in alike
            ):
                penalty = (
                    max(caps.penalty.get(path, 0) for caps in all_caps)
                    if depth == nodes_depth
                    else 0
                )
                rank = sum(
                    self._rank(caps, path, u) for caps, u in zip(all_caps, units, strict=True)
                )
                candidates.append((penalty, rank, path))
        return [path for _, _, path in sorted(candidates)]

    def _greedy_in(
        self,
        path: Path,
        asks: list[_Ask],
        own: dict[int, tuple[str, int | None]],
        out: list[tuple[int, str, int]],
    ) -> bool:
        """The quick way into one entry: the shared tasks one after another, then each task
        with its own topology inside the entry. False when that order does not take them."""
        if not self._try_group_in(path, [ask for ask in asks if ask.index not in own], out):
            return False
        for ask in asks:
            if ask.index in own:
                mode, level = own[ask.index]
                try:
                    self._place_group([ask], mode, level, out, within=path)
                except _Unschedulable:
                    return False
        return True

    def _greedy_root(
        self,
        asks: list[_Ask],
        own: dict[int, tuple[str, int | None]],
        mode: str,
        level: int | None,
        out: list[tuple[int, str, int]],
    ) -> None:
        """No single domain holds the gang: each shared task in turn over the whole cluster,
        then each task with its own topology."""
        for ask in asks:
            if ask.index in own:
                continue
            caps = self._capacities(ask)
            have = self._root_units(caps, ask)
            if have < ask.count:
                where = "" if mode == "unconstrained" else f" {self.levels[level or 0]}"
                raise _Unschedulable(
                    f"{mode}{where}: the cluster fits {ask.units_of(f'{have} of {ask.count}')}",
                    (None, have, ask.count, ask.unit_word),
                )
            self._place_in((), ask, ask.count, caps, out)
        for ask in asks:
            if ask.index in own:
                task_mode, task_level = own[ask.index]
                self._place_group([ask], task_mode, task_level, out)

    def _place_group(
        self,
        asks: list[_Ask],
        mode: str,
        level: int | None,
        out: list[tuple[int, str, int]],
        within: Path = (),
        own: dict[int, tuple[str, int | None]] | None = None,
    ) -> None:
        """Rule 5: the tasks inside the lowest entry in `within` (the root is `()`) that takes
        them, best fit first. For the gang (`own` given: the tasks with a topology of their own),
        those tasks go inside the entry too, and the exact search (rule 8) decides an entry that
        the quick way does not take; without it, every ask is placed as a shared one."""
        nodes_depth = len(self.levels)
        shallowest = level if mode == "required" and level is not None else 0
        shallowest = max(shallowest, len(within) - 1)
        exact = own is not None and len(asks) > 1
        all_caps = [self._capacities(ask) for ask in asks]
        for depth in range(nodes_depth, shallowest - 1, -1):
            for path in self._candidates(asks, all_caps, depth, within):
                mark, placed = len(self._log), len(out)
                if own is not None:
                    quick = self._greedy_in(path, asks, own, out)
                else:
                    quick = self._try_group_in(path, asks, out)
                if quick:
                    return
                self._undo(mark)
                del out[placed:]
                if exact and own is not None and self._exact(path, asks, own, out):
                    return
        if within:
            raise _Unschedulable(f"nothing inside {'/'.join(within)} holds the task")
        if mode == "required":
            assert level is not None
            raise self._required_failure(asks, level, all_caps)
        mark, placed = len(self._log), len(out)
        try:
            self._greedy_root(asks, own or {}, mode, level, out)
        except _Unschedulable as failure:
            self._undo(mark)
            del out[placed:]
            if exact and own is not None and self._exact((), asks, own, out):
                return
            raise failure from None

    def _try_group_in(self, path: Path, asks: list[_Ask], out: list[tuple[int, str, int]]) -> bool:
        depth = len(path) - 1
        for ask in asks:
            caps = self._capacities(ask)
            if (caps.units[depth].get(path, 0)) < ask.count:
                return False
            self._place_in(path, ask, ask.count, caps, out)
        return True

    # --- rule 8: the exact search ----------------------------------------------------------

    def _exact(
        self,
        within: Path,
        asks: list[_Ask],
        own: dict[int, tuple[str, int | None]],
        out: list[tuple[int, str, int]],
    ) -> bool:
        """Rule 8: whether any assignment of the gang inside `within` satisfies every
        constraint, searched exhaustively (see `_solve`); when one does, its pods are placed.

        The tasks are searched hardest first: larger slices, then more pods, then task order.
        A task with a `required` level of its own below `within` also picks its region."""
        depth = len(within) - 1
        order = sorted(asks, key=lambda a: (-a.k, -a.count * a.k, a.index))
        levels: list[int | None] = []
        for ask in order:
            mode, level = own.get(ask.index, ("", None))
            levels.append(
                level if mode == "required" and level is not None and level > depth else None
            )
        walk = [node for node in self._tree_nodes() if _inside(node, within)]
        loose = (
            sorted(
                (node for node in self.nodes.values() if node.path is None),
                key=lambda node: node.spec.name,
            )
            if not within
            else []
        )
        scope = _Scope(
            within,
            walk,
            loose,
            levels,
            self._twins(walk, order),
            {node.spec.name: [0] * len(order) for node in [*walk, *loose]},
        )
        mark, placed = len(self._log), len(out)
        if self._solve(order, scope, out):
            return True
        self._undo(mark)
        del out[placed:]
        return False

    def _twins(self, walk: list[_Node], asks: list[_Ask]) -> dict[str, str]:
        """Each node's previous interchangeable node in the walk: same parent of the node level,
        same labels (the hostname label aside, unless a task selects on it), allocatable, usage,
        taints and flags. The search gives a twin no more than the one before it (comparing the
        tasks' counts in search order), which leaves one of every set of mirror-image
        assignments."""
        host_selected = any(key == HOSTNAME for ask in asks for key, _ in ask.demand.selector)
        last: dict[tuple[object, ...], str] = {}
        twins: dict[str, str] = {}
        for node in walk:
            assert node.path is not None
            spec = node.spec
            labels = tuple(
                sorted((k, v) for k, v in spec.labels.items() if host_selected or k != HOSTNAME)
            )
            signature = (
                node.path[:-1] if self.implicit_host else node.path,
                labels,
                tuple(sorted((r, a) for r, a in node.allocatable.items() if a or r == "pods")),
                tuple(sorted((r, u) for r, u in node.used.items() if u)),
                node.taints,
                spec.unschedulable,
                spec.ready,
                # A node some task avoids is no twin of one it does not.
                tuple(spec.name in ask.demand.avoid for ask in asks),
            )
            if signature in last:
                twins[spec.name] = last[signature]
            last[signature] = spec.name
        return twins

    def _tree_nodes(self) -> list[_Node]:
        """The nodes of the tree in path order (the order the exact search walks them)."""
        if self._walk is None:
            tree = [node for node in self.nodes.values() if node.path is not None]
            self._walk = sorted(tree, key=lambda node: (*(node.path or ()), node.spec.name))
        return self._walk

    @staticmethod
    def _regions(level: int | None, scope: _Scope) -> list[Path | None]:
        """A task's regions: the whole scope (None), or each domain of its own level in it."""
        if level is None:
            return [None]
        found: list[Path | None] = []
        for node in scope.walk:
            assert node.path is not None
            region = node.path[: level + 1]
            if not found or found[-1] != region:
                found.append(region)
        return found

    def _region_nodes(self, region: Path | None, ask: _Ask, scope: _Scope) -> list[_Held]:
        """The nodes of a region that take a pod of `ask` now, with their slice groups."""
        result: list[_Held] = []
        for node in scope.walk:
            assert node.path is not None
            if region is not None and node.path[: len(region)] != region:
                continue
            fit = self._fit(node, ask.demand)
            if fit > 0:
                result.append((node, node.path[: ask.s + 1] if ask.k > 1 else None, fit))
        if region is None and ask.loose_ok:
            for node in scope.loose:
                fit = self._fit(node, ask.demand)
                if fit > 0:
                    result.append((node, None, fit))
        return result

    def _ahead(
        self, t: int, asks: list[_Ask], scope: _Scope, held: list[list[_Held]]
    ) -> list[_Ahead]:
        """Forward checking for the tasks after `t` that may use the whole scope; `held` has
        each task's nodes from `t` on, as `_bounds_hold` found them."""
        ahead = []
        for ask, level, nodes in zip(asks[t + 1 :], scope.levels[t + 1 :], held[1:], strict=True):
            if level is not None:
                continue
            groups: dict[Path | None, int] = {}
            for _, group, fit in nodes:
                groups[group] = groups.get(group, 0) + fit
            ahead.append(
                _Ahead(
                    ask,
                    {node.spec.name: fit for node, _, fit in nodes},
                    {node.spec.name: group for node, group, _ in nodes},
                    groups,
                    self._pods_capacity(nodes, ask.k),
                )
            )
        return ahead

    @staticmethod
    def _pods_capacity(nodes: list[_Held], k: int) -> int:
        """How many pods the nodes take, counting only whole slices of each slice group."""
        total, at = 0, 0
        while at < len(nodes):
            group, pods = nodes[at][1], 0
            while at < len(nodes) and nodes[at][1] == group:
                pods += nodes[at][2]
                at += 1
            total += pods // k * k
        return total

    def _bounds_hold(self, t: int, asks: list[_Ask], scope: _Scope) -> list[list[_Held]] | None:
        """Necessary conditions for the tasks from `t` on: each fits alone in its best region,
        and their summed requests fit in the scope's free capacity. When they hold, each task's
        nodes in the whole scope (for forward checking); None when they do not."""
        held: list[list[_Held]] = []
        for ask, level in zip(asks[t:], scope.levels[t:], strict=True):
            nodes = self._region_nodes(None, ask, scope)
            held.append(nodes)
            best = 0
            if level is None:
                best = self._pods_capacity(nodes, ask.k)
            else:
                at = 0
                while at < len(nodes):
                    path = nodes[at][0].path
                    assert path is not None
                    start, region = at, path[: level + 1]
                    while at < len(nodes) and (nodes[at][0].path or ())[: level + 1] == region:
                        at += 1
                    best = max(best, self._pods_capacity(nodes[start:at], ask.k))
            if best < ask.count * ask.k:
                return None
        loose = scope.loose if any(ask.loose_ok for ask in asks[t:]) else []
        considered = [
            node
            for node in [*scope.walk, *loose]
            if not node.spec.unschedulable and node.spec.ready
        ]
        need: dict[str, int] = {}
        for ask in asks[t:]:
            for resource, milli in ask.demand.requests.items():
                if resource != "pods" and milli > 0:
                    need[resource] = need.get(resource, 0) + milli * ask.count * ask.k
        if all("pods" in node.allocatable for node in considered):
            need["pods"] = POD * sum(ask.count * ask.k for ask in asks[t:])
        fits = all(
            amount <= sum(max(0, self._free(node, resource)) for node in considered)
            for resource, amount in need.items()
        )
        return held if fits else None

    def _solve(self, asks: list[_Ask], scope: _Scope, out: list[Placed]) -> bool:
        """The exact search's walk, as a loop over an explicit stack (regions can hold far
        more nodes than a recursion could go deep). Each task in turn picks a region (when it
        has a `required` level of its own below `within`) and then gives every node of it, in
        path order, as many pods as still fit, from the most down to none; a dead end undoes
        the latest choice and tries one pod less there. The first complete assignment wins."""
        frames: list[_Frame] = []
        cursor = (0, 0, 0)  # (node index, pods still to place, pods in the open slice group)
        action = "enter"
        while True:
            if action == "enter":  # start the next task, or finish
                t = len(frames)
                if t == len(asks):
                    return True
                held = self._bounds_hold(t, asks, scope)
                if held is None:
                    action = "retreat"
                    continue
                frames.append(
                    _Frame(
                        self._regions(scope.levels[t], scope),
                        ahead=self._ahead(t, asks, scope, held),
                    )
                )
                action = "region"
            elif action == "region":  # the current task's next region
                frame, ask = frames[-1], asks[len(frames) - 1]
                frame.region += 1
                if frame.region == len(frame.regions):
                    frames.pop()
                    action = "retreat"
                    continue
                frame.nodes = self._region_nodes(frame.regions[frame.region], ask, scope)
                listed = {node.spec.name: j for j, (node, _, _) in enumerate(frame.nodes)}
                frame.lead = [
                    listed.get(scope.twin.get(node.spec.name, "")) for node, _, _ in frame.nodes
                ]
                frame.suffix = [0] * (len(frame.nodes) + 1)
                for j in range(len(frame.nodes) - 1, -1, -1):
                    frame.suffix[j] = frame.suffix[j + 1] + frame.nodes[j][2]
                cursor = (0, ask.count * ask.k, 0)
                action = "descend"
            elif action == "descend":  # choose at the cursor's node
                self._steps += 1
                if self._steps > self.search_budget:
                    raise _Unschedulable(
                        f"search budget exhausted: {self.search_budget} steps found neither a "
                        "placement nor a proof that none exists"
                    )
                frame, ask = frames[-1], asks[len(frames) - 1]
                j, remaining, group = cursor
                if any(later.short for later in frame.ahead):
                    action = "back"
                    continue
                if remaining == 0:
                    action = "back" if group % ask.k else "enter"
                    continue
                if j == len(frame.nodes) or frame.suffix[j] < remaining:
                    action = "back"
                    continue
                top = min(frame.nodes[j][2], remaining)
                lead, t = frame.lead[j], len(frames) - 1
                if lead is not None:
                    mine = scope.given[frame.nodes[j][0].spec.name]
                    theirs = scope.given[frame.nodes[lead][0].spec.name]
                    if mine[:t] == theirs[:t]:
                        top = min(top, theirs[t])
                pods = frame.most(j, top, group, ask.k)
                if pods is None:
                    action = "back"
                    continue
                cursor = self._choose(frame, ask, scope, t, out, j, pods, remaining, group)
            elif action == "back":  # undo the current task's latest choice, try one pod less
                frame, ask = frames[-1], asks[len(frames) - 1]
                if not frame.choices:
                    action = "region"
                    continue
                j, pods, remaining, group, mark, placed, changed = frame.choices.pop()
                scope.given[frame.nodes[j][0].spec.name][len(frames) - 1] = 0
                self._undo(mark)
                del out[placed:]
                for index, name, fit in reversed(changed):
                    frame.ahead[index].set(name, fit)
                less = frame.most(j, pods - 1, group, ask.k)
                if less is None:
                    continue
                cursor = self._choose(
                    frame, ask, scope, len(frames) - 1, out, j, less, remaining, group
                )
                action = "descend"
            else:  # "retreat": the task after the current one failed
                if not frames:
                    return False
                action = "back"

    def _choose(
        self,
        frame: _Frame,
        ask: _Ask,
        scope: _Scope,
        t: int,
        out: list[Placed],
        j: int,
        pods: int,
        remaining: int,
        group: int,
    ) -> tuple[int, int, int]:
        """Gives node `j` `pods` pods of the task; returns the cursor for the next node."""
        node, _, _ = frame.nodes[j]
        changed: list[tuple[int, str, int]] = []
        frame.choices.append((j, pods, remaining, group, len(self._log), len(out), changed))
        scope.given[node.spec.name][t] = pods
        if pods:
            self._assign(node.spec.name, ask, pods, out)
            for index, later in enumerate(frame.ahead):
                if node.spec.name in later.fits:
                    fit = later.set(node.spec.name, self._fit(node, later.ask.demand))
                    changed.append((index, node.spec.name, fit))
        held = 0 if frame.closes(j) else group + pods
        return (j + 1, remaining - pods, held)

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
                    f"required {name}: the best {short} fits "
                    f"{ask.units_of(f'{fits} of {ask.count}')} ({shown})",
                    (where, fits, ask.count, ask.unit_word),
                )
        tasks = _join_and([ask.counted() for ask in asks])
        return _Unschedulable(f"required {name}: no {short} holds {tasks} together")

    def _undo(self, mark: int) -> None:
        while len(self._log) > mark:
            node, requests, pods = self._log.pop()
            self._apply(node, requests, pods, -1)

    def _attempt(
        self, gang: _placer.Gang, demands: list[_Demand], counts: list[int]
    ) -> list[tuple[int, str, int]]:
        out: list[tuple[int, str, int]] = []
        self._steps = 0
        self._walk = None
        gang_mode, gang_level = _topology(gang.topology)
        asks: list[_Ask] = []
        own: dict[int, tuple[str, int | None]] = {}
        for i, task in enumerate(gang.tasks):
            mode = gang_mode if task.topology is None else task.topology.mode
            asks.append(self._ask(i, task, demands[i], counts[i], mode))
            if task.topology is not None:
                own[i] = _topology(task.topology)
        self._place_group(asks, gang_mode, gang_level, out, own=own)
        return out

    def place(self, gang: _placer.Gang, policy: str = DEFAULT_POLICY) -> RawOutcome:
        return self._place(gang, policy)

    def _place(self, gang: _placer.Gang, policy: str) -> RawOutcome:
        if policy not in POLICIES:
            raise ValueError(f"policy: unknown policy {policy!r} (one of {', '.join(POLICIES)})")
        self._policy = policy
        attempts = [("placed", [task.replicas for task in gang.tasks])]
        if any(task.min_available < task.replicas for task in gang.tasks):
            attempts.append(("minimal", [task.min_available for task in gang.tasks]))
        failure = _Unschedulable("no attempt")
        requests, self._limits = _with_limits(gang)
        tasks = gang.tasks
        demands = [_Demand.of(task, asked) for task, asked in zip(tasks, requests, strict=True)]
        try:
            for status, counts in attempts:
                try:
                    out = self._attempt(gang, demands, counts)
                except _Unschedulable as err:
                    failure = err
                    continue
                finally:
                    self._undo(0)
                level, domain = self._lowest_common_domain(node for _, node, _ in out)
                return (status, _merged(out), level, domain, None, None)
        finally:
            self._limits = {}
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
        self, records: Sequence[_placer.Gang], policy: str = DEFAULT_POLICY
    ) -> list[tuple[int, RawOutcome]]:
        """A batch: higher `priority` first, then input order, each gang seeing the pods of the
        ones placed before it; `(input index, outcome)` in that order. The cluster is unchanged
        afterwards."""
        gangs = list(records)
        order = sorted(range(len(gangs)), key=lambda i: (-gangs[i].priority, i))
        results: list[tuple[int, RawOutcome]] = []
        held: list[list[tuple[str, Mapping[str, int], int]]] = []
        try:
            for index in order:
                outcome = self._place(gangs[index], policy)
                results.append((index, outcome))
                tasks = gangs[index].tasks
                items: list[tuple[str, Mapping[str, int], int]] = [
                    (node, tasks[task].requests, count) for task, node, count in outcome[1]
                ]
                if items:
                    self.assume(items)
                    held.append(items)
        finally:
            for items in reversed(held):
                self.release(items)
        return results


def _inside(node: _Node, entry: Path) -> bool:
    """True when a node of the tree lies inside the entry (a domain's path or a node's)."""
    assert node.path is not None
    return (*node.path, node.spec.name)[: len(entry)] == entry


def _merged(out: list[tuple[int, str, int]]) -> list[tuple[int, str, int]]:
    totals: dict[tuple[int, str], int] = {}
    for task, node, count in out:
        totals[(task, node)] = totals.get((task, node), 0) + count
    return [(task, node, count) for (task, node), count in sorted(totals.items())]


def _join_and(items: list[str]) -> str:
    """ "a", "a and b", "a, b and c": a list in a reason, read as a sentence."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
