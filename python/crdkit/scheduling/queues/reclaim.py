"""Reclaim: a queue under its nominal quota takes back what its cohort lent.

When a gang waits only because its queue's quota is lent out, and it would fit within what
its queue is guaranteed, the gangs that borrowed are evicted for it, whole, through the
scheduler's preemption (grace periods, Events naming the preemptor, the room held until the
victims are gone). The rule (`reclaim_rule`):

- victims are gangs of other queues of the same cohort tree that borrow now (use more than
  their own quota) in the flavor the gang needs, whatever their priority;
- a borrower's gangs are taken only while its queue still borrows: once the victims taken
  from it bring it to its nominal quota, no more of its gangs are taken, so no gang running
  within its own queue's nominal quota is evicted by a reclaim;
- the least loss first: the fewest GPUs, then the youngest; any victim the others make
  unnecessary is put back;
- enough are taken when, with them gone, the gang fits on the nodes and its queue's quota
  holds it.

Preemption by priority stays inside a queue (`within_queue_scope`): a gang may evict gangs of
lower priority of its own queue only, and none when its queue says ``Never``; gangs in no queue
evict only gangs in no queue.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from crdkit.scheduling.preemption import VictimRule
from crdkit.scheduling.queues.admission import with_added

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from crdkit.scheduling.pending import GroupRef
    from crdkit.scheduling.preemption import RunningGang
    from crdkit.scheduling.queues.admission import Ask
    from crdkit.scheduling.queues.gate import QueueGate
    from crdkit.scheduling.queues.tree import Fr, Usage

__all__ = ["Mode", "reclaim_rule", "within_queue_scope"]


def _least_loss(gang: RunningGang) -> tuple[int, float, str]:
    return (gang.gpus, -gang.created_s, gang.ref)


def _loss(value: str | None, victims: Sequence[RunningGang]) -> tuple[int, int, float, str]:
    """Of the victims a domain needs: the fewest GPUs, then the fewest gangs, then the
    youngest (the set whose oldest victim started last), then the domain's name."""
    oldest = min(v.created_s for v in victims)
    return (sum(v.gpus for v in victims), len(victims), -oldest, value or "")


Mode = Literal["reclaim", "own", "fair"]


def reclaim_rule(gate: QueueGate, ask: Ask, flavor: str, mode: Mode = "reclaim") -> VictimRule:
    """The victims ``ask`` may take its quota from in ``flavor``:

    - ``reclaim``: borrowers of its cohort tree, while it is under its nominal quota (see the
      module docstring);
    - ``own``: gangs of lower priority of its own queue (preemption inside a queue);
    - ``fair``: in a cohort that preempts for fair share, gangs of the other queues under it,
      each taken only while its queue's share (before losing it) is above the share the
      preemptor's queue has with the gang admitted: the preemptor never ends above a victim's
      queue as it was, so that queue cannot take the room back the same way (its share with
      its gang back would be above the preemptor's), and no two queues preempt in turn.
    """
    tree, usage, holdings = gate.tree, gate.usage, gate.holdings
    needed: list[Fr] = [
        (flavor, resource)
        for resource, milli in ask.requests.items()
        if milli and tree.limits(ask.queue, (flavor, resource)) is not None
    ]
    root = tree.root(ask.queue)
    cohort = tree.parent(ask.queue)
    peers = set(tree.leaves_under(cohort)) - {ask.queue} if cohort is not None else set()
    share_after = 0.0
    if mode == "fair":
        added = {fr: ask.requests[fr[1]] for fr in needed}
        share_after = tree.share(ask.queue, with_added(usage, ask.queue, added))

    def without(victims: Sequence[RunningGang]) -> dict[str, dict[Fr, int]]:
        after = {queue: dict(frs) for queue, frs in usage.items()}
        for victim in victims:
            queue, held = holdings[victim.ref]
            for fr, milli in held.items():
                after[queue][fr] = after[queue].get(fr, 0) - milli
        return after

    def borrows(queue: str, after: Usage) -> bool:
        return any(tree.usage_of(queue, fr, after) > tree.subtree_quota(queue, fr) for fr in needed)

    def eligible(gang: RunningGang) -> bool:
        held = holdings.get(gang.ref)
        if held is None:
            return False
        if mode == "own":
            return held[0] == ask.queue and gang.priority < ask.priority
        if held[0] == ask.queue or tree.root(held[0]) != root:
            return False
        if mode == "fair" and (held[0] not in peers or tree.share(held[0], usage) <= share_after):
            return False
        return any(held[1].get(fr) for fr in needed) and borrows(held[0], usage)

    def admits(candidate: RunningGang, chosen: Sequence[RunningGang]) -> bool:
        queue = holdings[candidate.ref][0]
        before = without([v for v in chosen if holdings[v.ref][0] == queue])
        if not borrows(queue, before):
            return False  # it no longer borrows: the rest of it runs within its own quota
        # Fair share: taken only while its queue's share, before losing it, is above the
        # preemptor's with the gang admitted (Kueue's LessThanInitialShare).
        return mode != "fair" or tree.share(queue, before) > share_after

    def enough(victims: Sequence[RunningGang]) -> bool:
        after = without(victims)
        return all(ask.requests[fr[1]] <= tree.available(ask.queue, fr, after) for fr in needed)

    if mode == "own":
        return VictimRule(eligible=eligible, enough=enough, anywhere=True)
    return VictimRule(
        eligible=eligible,
        order=_least_loss,
        admits=admits,
        enough=enough,
        cost=_loss,
        anywhere=True,
    )


def within_queue_scope(
    gate: QueueGate,
) -> Callable[[GroupRef], Callable[[RunningGang], bool] | bool | None]:
    """Whom a gang may preempt by priority once queues exist (see the module docstring)."""

    def scope(ref: GroupRef) -> Callable[[RunningGang], bool] | bool | None:
        if not gate.engaged:
            return True
        queue = gate.waiting.get(ref)
        found = gate.tree.queues.get(queue) if queue is not None else None
        if found is not None and found.within_queue == "Never":
            return None
        return lambda victim: gate.running_queue(victim.ref) == queue

    return scope
