"""The quota tree: queues, the cohorts they nest in, and how much each may use now.

A queue (`QueueDef`) guarantees ``nominal`` of each resource of each flavor to its gangs. A
queue may sit under another (its ``parent``, its cohort); queues nest, org → department → team,
with quota at each level. What a queue leaves unused it lends to its cohort, at most its
``lending`` limit; what its cohort holds it may borrow, at most its ``borrowing`` limit. The
arithmetic is Kueue's hierarchical cohorts', per flavor and resource (an ``Fr``):

- a node's *subtree quota* is its own nominal plus what each child puts into it (the child's
  subtree quota less what the child keeps for itself);
- a node *keeps* (its guaranteed quota) its subtree quota less its lending limit; with no
  lending limit it keeps nothing back, and lends all it does not use;
- a node's *usage* as its parent counts it is only what it uses beyond what it keeps;
- what a node may still take is what it keeps and does not use, plus what its parent may still
  give it, capped by its borrowing limit.

A queue limits only the resources it lists; a gang's other requests are not counted (a GPU
queue need not spell out CPU and memory). Everything here is pure: usage in, figures out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["FlavorDef", "Fr", "Limits", "QueueDef", "QuotaTree", "Usage"]

Fr = tuple[str, str]
"""A flavor and a resource: the unit quota is kept in."""

Usage = Mapping[str, Mapping[Fr, int]]
"""Per leaf queue, per flavor and resource, the milli-units its admitted gangs hold."""


@dataclass(frozen=True)
class Limits:
    """One resource of one flavor of a queue, in milli-units."""

    nominal: int
    borrowing: int | None = None
    """The most it may use beyond its subtree quota; None: no limit."""
    lending: int | None = None
    """The most of its subtree quota it lends to its cohort; None: all of it."""


@dataclass(frozen=True)
class FlavorDef:
    """A set of nodes picked by labels (empty: every node), and a queue's quota on them."""

    name: str
    node_labels: Mapping[str, str] = field(default_factory=dict)
    limits: Mapping[str, Limits] = field(default_factory=dict)
    """By resource name."""

    def holds(self, labels: Mapping[str, str]) -> bool:
        """Whether a node with ``labels`` is of this flavor."""
        return all(labels.get(key) == value for key, value in self.node_labels.items())


@dataclass(frozen=True)
class QueueDef:
    """A queue as the scheduler uses it (`crdkit.resources.Queue` decoded)."""

    name: str
    parent: str | None = None
    weight: float = 1.0
    flavors: tuple[FlavorDef, ...] = ()
    within_queue: Literal["LowerPriority", "Never"] = "LowerPriority"
    fair_share_preemption: bool = False
    max_run_seconds: int | None = None
    enforce_max_run: bool = False
    """Evict a gang that runs past ``max_run_seconds``."""


class QuotaTree:
    """The queues as a forest, with each node's quota figures computed once. Queues whose
    parent is missing or that sit on a parent cycle are `broken` (with the reason); gangs of a
    broken queue wait, and nothing else of the tree depends on them."""

    def __init__(self, queues: Iterable[QueueDef]) -> None:
        self.queues: dict[str, QueueDef] = {q.name: q for q in queues}
        self.broken: dict[str, str] = {}
        self.children: dict[str, list[str]] = {name: [] for name in self.queues}
        self._find_broken()
        for name, queue in sorted(self.queues.items()):
            if name not in self.broken and queue.parent is not None:
                self.children[queue.parent].append(name)
        self.frs: dict[str, set[Fr]] = {}
        """Per queue, every flavor and resource quota is kept in under it (its own and its
        subtree's)."""
        self._subtree: dict[str, dict[Fr, int]] = {}
        self._keeps: dict[str, dict[Fr, int]] = {}
        for name in self.queues:
            if name not in self.broken and self.parent(name) is None:
                self._fill(name)

    # -- shape -----------------------------------------------------------------------------

    def _find_broken(self) -> None:
        for name, queue in sorted(self.queues.items()):
            seen = [name]
            parent = queue.parent
            while parent is not None:
                if parent not in self.queues:
                    # A queue under a broken one is cut off from its quota too.
                    self.broken[name] = (
                        f"its parent queue {parent} does not exist"
                        if parent == queue.parent
                        else f"the queue above it, {parent}, does not exist"
                    )
                    break
                if parent in seen or parent in self.broken:
                    if parent in self.broken:
                        self.broken[name] = f"the queue above it, {parent}, is broken"
                        break
                    cycle = " → ".join([*seen[seen.index(parent) :], parent])
                    self.broken[name] = f"its parents form a cycle ({cycle})"
                    break
                seen.append(parent)
                parent = self.queues[parent].parent

    def parent(self, name: str) -> str | None:
        queue = self.queues.get(name)
        return None if queue is None or name in self.broken else queue.parent

    def is_leaf(self, name: str) -> bool:
        return not self.children.get(name)

    def root(self, name: str) -> str:
        while (parent := self.parent(name)) is not None:
            name = parent
        return name

    def path(self, name: str) -> list[str]:
        """The queue and every cohort above it, the queue first."""
        out = [name]
        while (parent := self.parent(out[-1])) is not None:
            out.append(parent)
        return out

    def leaves_under(self, name: str) -> list[str]:
        kids = self.children.get(name, [])
        if not kids:
            return [name]
        return [leaf for kid in kids for leaf in self.leaves_under(kid)]

    def flavor(self, queue: str, name: str) -> FlavorDef | None:
        for flavor in self.queues[queue].flavors:
            if flavor.name == name:
                return flavor
        return None

    def limits(self, queue: str, fr: Fr) -> Limits | None:
        flavor = self.flavor(queue, fr[0])
        return None if flavor is None else flavor.limits.get(fr[1])

    # -- quota -----------------------------------------------------------------------------

    def _fill(self, name: str) -> None:
        subtree: dict[Fr, int] = {}
        frs: set[Fr] = set()
        for flavor in self.queues[name].flavors:
            for resource, limits in flavor.limits.items():
                subtree[(flavor.name, resource)] = limits.nominal
                frs.add((flavor.name, resource))
        for kid in self.children[name]:
            self._fill(kid)
            frs |= self.frs[kid]
            for fr in self.frs[kid]:
                subtree[fr] = (
                    subtree.get(fr, 0) + self._subtree[kid].get(fr, 0) - self.keeps(kid, fr)
                )
        self.frs[name] = frs
        self._subtree[name] = subtree
        keeps: dict[Fr, int] = {}
        for fr in frs:
            own = self.limits(name, fr)
            if own is not None and own.lending is not None:
                keeps[fr] = max(0, subtree.get(fr, 0) - own.lending)
        self._keeps[name] = keeps

    def subtree_quota(self, name: str, fr: Fr) -> int:
        return self._subtree.get(name, {}).get(fr, 0)

    def keeps(self, name: str, fr: Fr) -> int:
        """What ``name`` keeps for itself of its subtree quota (never lent)."""
        return self._keeps.get(name, {}).get(fr, 0)

    def usage_of(self, name: str, fr: Fr, usage: Usage) -> int:
        """What the queue (a leaf: its gangs; a cohort: its children beyond what they keep)
        uses of ``fr``."""
        kids = self.children.get(name, [])
        if not kids:
            return usage.get(name, {}).get(fr, 0)
        return sum(max(0, self.usage_of(kid, fr, usage) - self.keeps(kid, fr)) for kid in kids)

    def available(self, name: str, fr: Fr, usage: Usage) -> int:
        """How much more of ``fr`` the queue may use now (negative: it is over)."""
        used = self.usage_of(name, fr, usage)
        parent = self.parent(name)
        if parent is None:
            return self.subtree_quota(name, fr) - used
        keeps = self.keeps(name, fr)
        own = max(0, keeps - used)
        from_parent = self.available(parent, fr, usage)
        limits = self.limits(name, fr)
        if limits is not None and limits.borrowing is not None:
            in_parent = self.subtree_quota(name, fr) - keeps
            used_in_parent = max(0, used - keeps)
            from_parent = min(from_parent, in_parent - used_in_parent + limits.borrowing)
        return own + from_parent

    def borrowed(self, name: str, fr: Fr, usage: Usage) -> int:
        """What the queue uses beyond its subtree quota."""
        return max(0, self.usage_of(name, fr, usage) - self.subtree_quota(name, fr))

    def lent(self, name: str, fr: Fr, usage: Usage) -> int:
        """What of the queue's unused quota its cohort is lending out: its lendable part, as
        far as the other queues of its cohort borrow beyond the cohort's own nominal quota (an
        upper bound when several queues could be the lender)."""
        parent = self.parent(name)
        if parent is None:
            return 0
        used, keeps = self.usage_of(name, fr, usage), self.keeps(name, fr)
        lendable = max(0, self.subtree_quota(name, fr) - keeps - max(0, used - keeps))
        others = sum(self.borrowed(kid, fr, usage) for kid in self.children[parent] if kid != name)
        return max(0, min(lendable, others - self.own_nominal(parent, fr)))

    def own_nominal(self, name: str, fr: Fr) -> int:
        limits = self.limits(name, fr)
        return 0 if limits is None else limits.nominal

    def share(self, name: str, usage: Usage) -> float:
        """The queue's weighted dominant resource share in its cohort: over every flavor and
        resource, the most it borrows as a fraction of what the whole tree holds, divided by
        its weight (Kueue's fair-sharing share, as a fraction). 0 while it borrows nothing."""
        root = self.root(name)
        worst = 0.0
        for fr in self.frs.get(name, ()):
            total = self.subtree_quota(root, fr)
            borrowed = self.borrowed(name, fr, usage)
            if borrowed and total > 0:
                worst = max(worst, borrowed / total)
        if worst == 0.0:
            return 0.0
        weight = self.queues[name].weight
        return worst / weight if weight > 0 else float("inf")
