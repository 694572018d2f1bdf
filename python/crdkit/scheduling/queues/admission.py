"""Which waiting gangs their queues admit this pass, in which order, and in which flavor.

The order (`admit_in_order`):

- within a queue, higher priority first, then the gang's place in line (its arrival, less its
  size credit), as without queues;
- across queues, fair share decides: of the gangs at the head of their queues, the next is the
  one whose queue's weighted share (`QuotaTree.share`) would be lowest with it admitted. In
  nested cohorts the comparison is made where the two queues' paths part, between the two
  children of their nearest common cohort (Kueue's hierarchical fair-sharing tournament); ties
  go to priority, then place in line;
- a gang is admitted in the first of its queue's flavors whose nodes it may use and whose
  quota, borrowing included, holds the whole gang; otherwise it is refused, with the reason,
  and the gangs behind it in its queue are still considered (best-effort FIFO, as Kueue's
  default): the scheduler's reservations, not quota, keep a big gang from starving.

Each admission counts against its queue at once, so the gangs after it see it. The gangs
admitted are placed in that order; one that does not fit gives its quota back
(`crdkit.scheduling.queues.gate`). Everything here is pure: tree, usage and asks in, verdict
out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crdkit.placer.quantity import format_quantity

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Mapping, Sequence

    from crdkit.scheduling.queues.tree import FlavorDef, Fr, QuotaTree, Usage

__all__ = ["Ask", "Refusal", "Verdict", "admit_in_order", "quota_text", "with_added"]


@dataclass(frozen=True)
class Ask:
    """A gang asks its queue for room: the whole of what its pending pods request."""

    key: Hashable
    queue: str
    requests: Mapping[str, int]
    """Milli-units by resource name."""
    priority: int = 0
    place: Any = ()
    """Its place in its priority's line (sortable)."""


@dataclass(frozen=True)
class Refusal:
    reason: str
    topic: str = ""
    """What the reason is about, for Events: a new topic is a new Event; a new figure of the
    same quota only rewrites the status (default: the reason itself)."""
    reclaims: str | None = None
    """The flavor in which it would fit within its queue's own nominal quota, were the
    borrowers of its cohort gone: it may reclaim there."""
    flavor: str | None = None
    """The first flavor its pods may use: where it may preempt inside its queue."""


@dataclass
class Verdict:
    admitted: list[tuple[Ask, str]] = field(default_factory=list)
    """In the order to place them, each with the flavor it was admitted in."""
    refused: dict[Hashable, Refusal] = field(default_factory=dict)
    usage: dict[str, dict[Fr, int]] = field(default_factory=dict)
    """The usage with every admitted gang counted."""


def _amounts(ask: Ask, flavor: str) -> dict[Fr, int]:
    return {(flavor, resource): milli for resource, milli in ask.requests.items()}


def with_added(usage: Usage, queue: str, amounts: Mapping[Fr, int]) -> dict[str, dict[Fr, int]]:
    """``usage`` with ``amounts`` added to ``queue``'s (a copy of that queue's entry only)."""
    out = dict(usage)
    mine = dict(usage.get(queue, {}))
    for fr, milli in amounts.items():
        mine[fr] = mine.get(fr, 0) + milli
    out[queue] = mine
    return out  # type: ignore[return-value]


def fits(tree: QuotaTree, ask: Ask, flavor: FlavorDef, usage: Usage) -> bool:
    """Whether the queue's quota in ``flavor`` holds the whole gang now."""
    return all(
        milli <= tree.available(ask.queue, (flavor.name, resource), usage)
        for resource, milli in ask.requests.items()
        if milli and resource in flavor.limits
    )


def within_nominal(tree: QuotaTree, ask: Ask, flavor: FlavorDef, usage: Usage) -> bool:
    """Whether the gang fits inside what its queue is guaranteed in ``flavor`` (its nominal
    quota, less nothing it lends), with its queue's other gangs counted."""
    return all(
        usage.get(ask.queue, {}).get((flavor.name, resource), 0) + milli
        <= tree.subtree_quota(ask.queue, (flavor.name, resource))
        for resource, milli in ask.requests.items()
        if milli and resource in flavor.limits
    )


def quota_text(tree: QuotaTree, queue: str, fr: Fr, usage: Usage, need: int) -> str:
    """Why ``need`` of ``fr`` is not to be had: "queue team-a: 64 of 64 nvidia.com/gpu in use;
    the gang needs 16, and its cohort org lends 0"."""
    flavor, resource = fr
    used = tree.usage_of(queue, fr, usage)
    nominal = tree.subtree_quota(queue, fr)
    borrowed = tree.borrowed(queue, fr, usage)
    where = f" of flavor {flavor}" if len(tree.queues[queue].flavors) > 1 else ""
    text = (
        f"queue {queue}: {format_quantity(used)} of {format_quantity(nominal)} {resource}"
        f"{where} in use"
    )
    if borrowed:
        text += f" ({format_quantity(borrowed)} borrowed)"
    text += f"; the gang needs {format_quantity(need)}"
    parent = tree.parent(queue)
    if parent is None:
        return text
    keeps = tree.keeps(queue, fr)
    lends = max(0, tree.available(queue, fr, usage) - max(0, keeps - used))
    limits = tree.limits(queue, fr)
    cap = None if limits is None else limits.borrowing
    if cap is not None and borrowed >= cap:
        return f"{text}, and it may borrow no more than {format_quantity(cap)}"
    return f"{text}, and its cohort {parent} lends {format_quantity(lends)}"


def _refusal(tree: QuotaTree, ask: Ask, flavors: Sequence[FlavorDef], usage: Usage) -> Refusal:
    if not flavors:
        names = ", ".join(f.name for f in tree.queues[ask.queue].flavors) or "none"
        why = f"queue {ask.queue}: none of its flavors ({names}) has nodes its pods may use"
        return Refusal(why, why)
    reclaims = next((f.name for f in flavors if within_nominal(tree, ask, f, usage)), None)
    flavor = flavors[0]
    for resource, milli in sorted(ask.requests.items()):
        fr = (flavor.name, resource)
        if milli and resource in flavor.limits and milli > tree.available(ask.queue, fr, usage):
            text = quota_text(tree, ask.queue, fr, usage, milli)
            return Refusal(text, f"quota of queue {ask.queue}", reclaims, flavor.name)
    why = f"queue {ask.queue}: no quota holds the gang"
    return Refusal(why, why, reclaims, flavor.name)


def _not_queueable(tree: QuotaTree, queue: str) -> str | None:
    """Why no gang can be admitted by ``queue`` at all, or None."""
    if queue not in tree.queues:
        return f"queue {queue} does not exist"
    broken = tree.broken.get(queue)
    if broken is not None:
        return f"queue {queue} cannot admit gangs: {broken}"
    if not tree.is_leaf(queue):
        return f"queue {queue} is a cohort (queues sit under it): a gang names a queue with none"
    return None


def admit_in_order(
    tree: QuotaTree,
    usage: Usage,
    asks: Sequence[Ask],
    may_use: Callable[[Ask, FlavorDef], bool],
) -> Verdict:
    """See the module docstring. ``may_use`` says whether the gang's pods may go on a
    flavor's nodes at all (their own node selectors against the flavor's labels)."""
    verdict = Verdict(usage={queue: dict(frs) for queue, frs in usage.items()})
    lines: dict[str, list[Ask]] = {}
    for ask in asks:
        why = _not_queueable(tree, ask.queue)
        if why is not None:
            verdict.refused[ask.key] = Refusal(why, why)
        else:
            lines.setdefault(ask.queue, []).append(ask)
    for line in lines.values():
        line.sort(key=lambda a: (-a.priority, a.place), reverse=True)  # pop() takes the first
    usable: dict[Hashable, list[FlavorDef]] = {}
    while lines:
        heads: list[tuple[Ask, FlavorDef]] = []
        for queue in sorted(lines):
            line = lines[queue]
            while line:
                ask = line[-1]
                if ask.key not in usable:
                    usable[ask.key] = [f for f in tree.queues[queue].flavors if may_use(ask, f)]
                flavor = next(
                    (f for f in usable[ask.key] if fits(tree, ask, f, verdict.usage)), None
                )
                if flavor is not None:
                    heads.append((ask, flavor))
                    break
                verdict.refused[ask.key] = _refusal(tree, ask, usable[ask.key], verdict.usage)
                line.pop()
            if not line:
                del lines[queue]
        if not heads:
            break
        best = heads[0]
        for head in heads[1:]:
            if _before(tree, verdict.usage, head, best):
                best = head
        ask, flavor = best
        lines[ask.queue].pop()
        if not lines[ask.queue]:
            del lines[ask.queue]
        verdict.usage = with_added(verdict.usage, ask.queue, _amounts(ask, flavor.name))
        verdict.admitted.append((ask, flavor.name))
    return verdict


def _before(
    tree: QuotaTree, usage: Usage, one: tuple[Ask, FlavorDef], other: tuple[Ask, FlavorDef]
) -> bool:
    """Whether ``one`` goes before ``other``: compared where their queues' paths part, by the
    share the child of their common cohort on each side would have with the gang admitted."""
    (a, fa), (b, fb) = one, other
    path_a, path_b = tree.path(a.queue)[::-1], tree.path(b.queue)[::-1]
    if path_a[0] == path_b[0]:
        depth = 0
        while path_a[depth] == path_b[depth]:
            depth += 1  # the same queue never reaches here: one head per queue
        share_a = tree.share(path_a[depth], with_added(usage, a.queue, _amounts(a, fa.name)))
        share_b = tree.share(path_b[depth], with_added(usage, b.queue, _amounts(b, fb.name)))
        if share_a != share_b:
            return share_a < share_b
    return (-a.priority, a.place) < (-b.priority, b.place)
