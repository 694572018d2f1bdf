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
together. `choose_victims` is pure (the mirror's view in, a choice out). `Preemptor` owns the
rest of the state: the running gangs read as victims (decoded again only when they change),
and which preemptor still waits for its victims to go. It returns an `Evict` decision and
holds the freed room through `crdkit.scheduling.reservations.Reservations`; the dispatcher
deletes the victims and writes the Events naming the preemptor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from crdkit.scheduling.decisions import Evict, marked_for_preemption
from crdkit.scheduling.mirror import pod_key
from crdkit.scheduling.pending import GROUP_INDEX
from crdkit.scheduling.room import fits_without, required_level

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from crdkit import _placer
    from crdkit.placer.cluster import GangInput
    from crdkit.resources import Pod, PodDisruptionBudget
    from crdkit.runtime.store import Store
    from crdkit.scheduling.mirror import ClusterMirror
    from crdkit.scheduling.pending import GroupReader, GroupRef, PendingGroup
    from crdkit.scheduling.reservations import DomainReservation, Reservations

__all__ = [
    "Preemption",
    "Preemptor",
    "RunningGang",
    "VictimPod",
    "VictimRule",
    "choose_victims",
]

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
    def created_s(self) -> float:
        """Its creation in epoch seconds; unknown, the oldest there can be (youngest first
        takes it last)."""
        return (self.created or _OLDEST).timestamp()

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
    return (gang.breaks_budget, gang.priority, gang.gpus, -gang.created_s, gang.ref)


def _priority_cost(value: str | None, victims: Sequence[RunningGang]) -> tuple[Any, ...]:
    return (
        sum(v.breaks_budget for v in victims),
        max(v.priority for v in victims),
        sum(v.gpus for v in victims),
        len(victims),
        value or "",
    )


def _always(*_: Any) -> bool:
    return True


@dataclass(frozen=True)
class VictimRule:
    """Who may be evicted, in which order, and when enough are: by default the rules of the
    module docstring (strictly lower priority, inside the domain). Reclaim
    (`crdkit.scheduling.queues.reclaim`) gives its own: borrowers of any priority, least loss
    first, anywhere in the cohort, until the preemptor's quota holds it too."""

    eligible: Callable[[RunningGang], bool] | None = None
    """None: strictly lower priority than the preemptor."""
    order: Callable[[RunningGang], Any] = _victim_order
    admits: Callable[[RunningGang, Sequence[RunningGang]], bool] = field(default=_always)
    """Whether a candidate may join the victims chosen so far."""
    enough: Callable[[Sequence[RunningGang]], bool] = field(default=_always)
    """Besides room: whether these victims gone, the preemptor may run (its quota)."""
    cost: Callable[[str | None, Sequence[RunningGang]], Any] = _priority_cost
    """Of a domain's victims: the lowest wins."""
    anywhere: bool = False
    """Victims may be outside the domain (they free quota, not room)."""


_BY_PRIORITY = VictimRule()


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
    rule: VictimRule,
) -> tuple[RunningGang, ...] | None:
    """The fewest victims, by the order of the rules, that let ``gang`` fit on ``nodes``."""
    here = sorted(
        (c for c in candidates if rule.anywhere or any(p.node in nodes for p in c.pods)),
        key=rule.order,
    )

    def done(victims: Sequence[RunningGang]) -> bool:
        return fits_without(mirror, nodes, gang, _removed(victims, nodes)) and rule.enough(victims)

    chosen: list[RunningGang] = []
    for candidate in here:
        if not rule.admits(candidate, chosen):
            continue
        chosen.append(candidate)
        if done(chosen):
            break
    else:
        return None
    # Put back any victim the others make unnecessary, the most costly first.
    for candidate in sorted(chosen, key=rule.order, reverse=True):
        rest = [c for c in chosen if c is not candidate]
        if done(rest):
            chosen = rest
    return tuple(sorted(chosen, key=rule.order))


def choose_victims(
    mirror: ClusterMirror,
    gang: GangInput,
    priority: int,
    running: Sequence[RunningGang],
    *,
    protected: frozenset[str] = frozenset(),
    rule: VictimRule = _BY_PRIORITY,
) -> Preemption | None:
    """Where ``gang`` (of ``priority``, not fitting now) goes by preempting, and whom; None
    when no domain frees enough by evicting gangs of lower priority (or those ``rule``
    allows). Nodes in ``protected`` (held for gangs it may not overtake) rule their domain
    out."""
    eligible = rule.eligible or (lambda g: g.priority < priority)
    candidates = [g for g in running if eligible(g)]
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
    if rule.enough(()) and any(
        fits_without(mirror, nodes, gang, {}) for nodes in open_domains.values()
    ):
        # It fits now (room freed since it was placed): placing it is the next pass's work.
        return None
    best: tuple[Any, Preemption] | None = None
    for value, nodes in open_domains.items():
        victims = _in_domain(mirror, gang, nodes, candidates, rule)
        if not victims:
            continue  # nothing to evict here (or it fits already: not a preemption)
        cost = rule.cost(value, victims)
        if level is None:
            # Without a level the room is the whole cluster: hold only what the victims free.
            nodes = frozenset(pod.node for v in victims for pod in v.pods) - protected
        if best is None or cost < best[0]:
            best = (cost, Preemption(level, value, nodes, victims))
    return None if best is None else best[1]


@dataclass(frozen=True)
class _Read:
    """What one gang's pods say: the victim it makes (None: nothing of it runs, or it is
    being deleted), and its pods marked preemption victims that are still bound."""

    gang: RunningGang | None
    going: tuple[str, ...]


class Preemptor:
    """Evicts lower-priority gangs for the gang first in its priority's line, when that lets
    it fit, and holds the room they free for it (see the module docstring)."""

    def __init__(
        self,
        mirror: ClusterMirror,
        reservations: Reservations,
        reader: GroupReader,
        pods: Store[Pod],
        budgets: Store[PodDisruptionBudget],
    ) -> None:
        self._mirror = mirror
        self._reservations = reservations
        self._reader = reader
        self._pods = pods
        self._budgets = budgets
        self._preempting: dict[GroupRef, set[str]] = {}
        """Gangs that evicted victims: the victims' pod keys, until they are gone."""
        self._running: list[RunningGang] | None = None
        """This pass's running gangs (victim candidates), read once for every preemptor."""
        self._running_read: dict[str, tuple[tuple[Any, ...], _Read]] = {}
        """Per gang with pods in the cache: what its pods were when last decoded, and what
        was read of it."""
        self._going: frozenset[str] = frozenset()
        """This pass's pods marked preemption victims, bound and unfinished (by key)."""

        self.scope: Callable[[GroupRef], Callable[[RunningGang], bool] | bool | None] | None = None
        """Whom a preemptor may evict at all, by its gang (queues keep preemption inside a
        queue, `crdkit.scheduling.queues.reclaim`): a test on each candidate, or None for
        no one; unset, any gang of lower priority."""

    def new_pass(self) -> None:
        """The running gangs are read again (once) by the next preemptor that asks."""
        self._running = None

    def forget(self, ref: GroupRef) -> None:
        self._preempting.pop(ref, None)

    def running(self) -> list[RunningGang]:
        """This pass's running gangs (deleting ones left out), read once a pass."""
        if self._running is None:
            self._running = self._read_running_gangs()
        return self._running

    def unclaimed_victims(self) -> bool:
        """Whether victims of an eviction this process did not decide are still going: one a
        scheduler began before it stopped (its marks outlive it). The room they free is
        coming; evicting more for it would take a second gang for one (the crash tests'
        kill-before on a victim's delete)."""
        self.running()
        if not self._going:
            return False
        ours = set().union(*self._preempting.values())
        return bool(self._going - ours)

    def awaiting(self, ref: GroupRef) -> bool:
        """Whether the gang evicted victims that are not all gone yet."""
        waiting_for = self._preempting.get(ref)
        if waiting_for is None:
            return False
        if any(key in self._pods for key in waiting_for):
            return True
        del self._preempting[ref]
        return False

    def preempt(
        self,
        group: PendingGroup,
        priority: int,
        gang: Callable[[], _placer.Gang],
    ) -> tuple[DomainReservation, Evict] | None:
        """The room held for ``group`` and the gangs to evict for it, if it preempts now."""
        ref = group.ref
        if any(p.spec.preemption_policy == "Never" for p in group.pending):
            return None
        if self.awaiting(ref) or self.unclaimed_victims():
            return None  # its victims, or another eviction's, are still going
        if not self._reservations.first_in_line(ref, priority):
            return None
        protected = self._reservations.protected_from(ref, priority)
        running = self._running_gangs(ref)
        inside = True if self.scope is None else self.scope(ref)
        if inside is None:
            return None
        if not isinstance(inside, bool):
            running = [victim for victim in running if inside(victim)]
        if not any(victim.priority < priority for victim in running):
            return None  # only strictly lower priorities are victims
        choice = choose_victims(self._mirror, gang(), priority, running, protected=protected)
        return None if choice is None else self._take(ref, priority, choice, "")

    def reclaim(
        self, group: PendingGroup, priority: int, gang: _placer.Gang, rule: VictimRule, why: str
    ) -> tuple[DomainReservation, Evict] | None:
        """As `preempt`, by ``rule`` (whatever the victims' priority, and whether or not the
        gang is first in its priority's line); ``why`` is said on each victim."""
        ref = group.ref
        if self.awaiting(ref) or self.unclaimed_victims():
            return None
        protected = self._reservations.protected_from(ref, priority)
        choice = choose_victims(
            self._mirror, gang, priority, self._running_gangs(ref), protected=protected, rule=rule
        )
        return None if choice is None else self._take(ref, priority, choice, why)

    def _take(
        self, ref: GroupRef, priority: int, choice: Preemption, why: str
    ) -> tuple[DomainReservation, Evict]:
        self._preempting[ref] = {pod.key for victim in choice.victims for pod in victim.pods}
        reservation = self._reservations.hold_freed(ref, priority, choice)
        return reservation, Evict(ref, priority, choice.victims, reservation.where(), why)

    def _running_gangs(self, exclude: GroupRef) -> list[RunningGang]:
        """This scheduler's gangs with pods bound (deleting ones, and ones being evicted,
        excluded), as victims: read from the pod cache once a pass, however many gangs look
        for victims in it."""
        going = self._going
        return [
            gang
            for gang in self.running()
            if gang.ref != str(exclude) and not any(pod.key in going for pod in gang.pods)
        ]

    def _read_running_gangs(self) -> list[RunningGang]:
        """Each gang is decoded again only when one of its pods changed (its resourceVersion
        or where the mirror counts it) or a PodDisruptionBudget did: decoding every running
        pod on every pass costs more than the rest of the pass."""
        store, budgets = self._pods, self._budgets
        budget_state = tuple((k, budgets.version_of(k)) for k in sorted(budgets.keys()))
        gangs: list[RunningGang] = []
        going: set[str] = set()
        kept: dict[str, tuple[tuple[Any, ...], _Read]] = {}
        for text in store.index_values(GROUP_INDEX):
            keys = store.index_keys(GROUP_INDEX, text)
            state = (
                budget_state,
                tuple((k, store.version_of(k), self._mirror.node_of(k)) for k in sorted(keys)),
            )
            cached = self._running_read.get(text)
            read = cached[1] if cached is not None and cached[0] == state else self._read_gang(text)
            kept[text] = (state, read)
            if read.gang is not None:
                gangs.append(read.gang)
            going.update(read.going)
        self._running_read = kept
        self._going = frozenset(going)
        return gangs

    def _read_gang(self, text: str) -> _Read:
        pods = self._reader.pods(text)
        victims: list[VictimPod] = []
        going: list[str] = []
        deleting = False
        for pod in pods:
            key = pod_key(pod.metadata.namespace, pod.metadata.name)
            node = pod.spec.node_name or self._mirror.node_of(key)
            phase = pod.status.phase if pod.status else None
            if not node or phase in ("Succeeded", "Failed"):
                continue
            if marked_for_preemption(pod):
                going.append(key)
            if pod.metadata.deletion_timestamp is not None:
                deleting = True  # already going: evicting it again frees nothing new
                continue
            milli = self._mirror.requests(pod)  # parsed once per version, counted or not
            victims.append(VictimPod(key, node, milli, pod.metadata.uid))
        if deleting or not victims:
            return _Read(None, tuple(going))
        stamps = [p.metadata.creation_timestamp for p in pods if p.metadata.creation_timestamp]
        live = [p for p in pods if p.metadata.deletion_timestamp is None]
        gang = RunningGang(
            text,
            max((p.spec.priority or 0 for p in pods), default=0),
            min(stamps) if stamps else None,
            tuple(victims),
            self._breaks_budget(live),
        )
        return _Read(gang, tuple(going))

    def _breaks_budget(self, pods: Sequence[Pod]) -> bool:
        """Whether evicting ``pods`` takes more than some PodDisruptionBudget allows."""
        for budget in self._budgets.list():
            selector = budget.spec.selector
            if selector is None:
                continue  # policy/v1: a budget with no selector covers no pod
            covered = sum(
                1
                for pod in pods
                if pod.metadata.namespace == budget.metadata.namespace
                and selector.matches(pod.metadata.labels)
            )
            allowed = budget.status.disruptions_allowed if budget.status else 0
            if covered > allowed:
                return True
        return False
