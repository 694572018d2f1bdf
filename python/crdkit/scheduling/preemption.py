"""Gang preemption: which running gangs a waiting gang of higher priority may evict, and where.

The rules (as Volcano, KAI and Kueue preempt workloads, not kube-scheduler's single pods):

- victims are whole gangs, never part of one; a pod in no group is a gang of one;
- only gangs of strictly lower priority are victims, so preemption cannot cascade;
- victims are chosen inside one candidate domain of the preemptor's ``required`` level (the
  whole cluster without one, where the nodes the victims free are what is held for it), and
  never in a domain that holds nodes for a gang the preemptor may not overtake;
- PodDisruptionBudgets are honoured as kube-scheduler honours them: victims whose eviction
  would break one are taken only when no others make room, and the domain that breaks the
  fewest wins;
- in each domain, victims are taken lowest priority first, then fewest GPUs, then youngest,
  until the preemptor fits with their pods gone; any that turn out not to be needed are put
  back. The domain chosen is the one whose victims lose least: the fewest broken budgets, then
  the lowest highest-priority among them, then the fewest GPUs, then the fewest gangs, then the
  domain's name.

Only the gangs of this scheduler are candidates (it knows their gangs). A budget is judged gang
by gang (its ``disruptionsAllowed`` against the gang's pods it covers), not for the victims
together. `choose_victims` is pure (the mirror's view in, a choice out); the scheduler
evicts the victims, holds the domain for the preemptor until they are gone, and writes the
Events (`crdkit.scheduling.scheduler`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from crdkit.scheduling.reservations import fits_without, required_level

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from crdkit import _placer
    from crdkit.placer.cluster import GangInput
    from crdkit.scheduling.mirror import ClusterMirror

__all__ = ["Preemption", "RunningGang", "VictimPod", "choose_victims"]

_OLDEST = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True)
class VictimPod:
    key: str
    """``namespace/name``."""
    node: str
    milli: Mapping[str, int]
    uid: str | None


@dataclass(frozen=True)
class RunningGang:
    """A gang with pods bound, as a candidate victim."""

    ref: str
    priority: int
    created: datetime | None
    pods: tuple[VictimPod, ...]
    breaks_budget: bool = False
    """Evicting it would take more pods than a PodDisruptionBudget covering them allows."""

    @property
    def gpus(self) -> int:
        """GPUs it holds, in milli-units (every resource whose name ends in ``gpu``)."""
        return sum(
            amount
            for pod in self.pods
            for resource, amount in pod.milli.items()
            if resource.endswith("gpu")
        )


@dataclass(frozen=True)
class Preemption:
    level: str | None
    domain: str | None
    nodes: frozenset[str]
    victims: tuple[RunningGang, ...]


def _victim_order(gang: RunningGang) -> tuple[bool, int, int, float, str]:
    created = gang.created or _OLDEST
    return (gang.breaks_budget, gang.priority, gang.gpus, -created.timestamp(), gang.ref)


def _removed(victims: Sequence[RunningGang], nodes: frozenset[str]) -> dict[str, list[Any]]:
    removed: dict[str, list[Any]] = {}
    for victim in victims:
        for pod in victim.pods:
            if pod.node in nodes:
                removed.setdefault(pod.node, []).append(pod.milli)
    return removed


def _in_domain(
    mirror: ClusterMirror,
    gang: _placer.Gang,
    nodes: frozenset[str],
    candidates: Sequence[RunningGang],
) -> tuple[RunningGang, ...] | None:
    """The fewest victims, by the order of the rules, that let ``gang`` fit on ``nodes``."""
    here = sorted(
        (c for c in candidates if any(p.node in nodes for p in c.pods)), key=_victim_order
    )
    chosen: list[RunningGang] = []
    for candidate in here:
        chosen.append(candidate)
        if fits_without(mirror, nodes, gang, _removed(chosen, nodes)):
            break
    else:
        return None
    # Put back any victim the others make unnecessary, the most costly first.
    for candidate in sorted(chosen, key=_victim_order, reverse=True):
        rest = [c for c in chosen if c is not candidate]
        if fits_without(mirror, nodes, gang, _removed(rest, nodes)):
            chosen = rest
    return tuple(sorted(chosen, key=_victim_order))


def choose_victims(
    mirror: ClusterMirror,
    gang: GangInput,
    priority: int,
    running: Sequence[RunningGang],
    *,
    protected: frozenset[str] = frozenset(),
) -> Preemption | None:
    """Where ``gang`` (of ``priority``, not fitting now) goes by preempting, and whom; None
    when no domain frees enough by evicting gangs of lower priority. Nodes in ``protected``
    (held for gangs it may not overtake) rule their domain out."""
    candidates = [g for g in running if g.priority < priority]
    if not candidates:
        return None
    gang = mirror.cluster.compile(gang)  # once, for every set of victims tried
    domains: dict[str | None, set[str]] = {}
    level = required_level(gang)
    if level is not None:
        for entry in mirror.nodes():
            value = entry["labels"].get(level)
            if value is not None:
                domains.setdefault(value, set()).add(entry["name"])
    else:
        domains[None] = set(mirror.node_names()) - protected  # the rest of the cluster
    open_domains = {
        value: frozenset(names) for value, names in domains.items() if not names & protected
    }
    if any(fits_without(mirror, nodes, gang, {}) for nodes in open_domains.values()):
        # It fits now (room freed since it was placed): placing it is the next pass's work.
        return None
    best: tuple[tuple[int, int, int, int, str], Preemption] | None = None
    for value, nodes in open_domains.items():
        victims = _in_domain(mirror, gang, nodes, candidates)
        if not victims:
            continue  # nothing to evict here (or it fits already: not a preemption)
        cost = (
            sum(v.breaks_budget for v in victims),
            max(v.priority for v in victims),
            sum(v.gpus for v in victims),
            len(victims),
            value or "",
        )
        if level is None:
            # Without a level the room is the whole cluster: hold only what the victims free.
            nodes = frozenset(pod.node for v in victims for pod in v.pods) - protected
        if best is None or cost < best[0]:
            best = (cost, Preemption(level, value, nodes, victims))
    return None if best is None else best[1]
