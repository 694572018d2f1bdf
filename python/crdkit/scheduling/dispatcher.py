"""Every API call the gang scheduler makes, in one place (kube-scheduler's API dispatcher).

The cycle decides; `Dispatcher.apply` performs its decisions in the order they were made:
binds (all or nothing, `crdkit.scheduling.binder.Binder`), roll-backs of gangs left partly
bound, evictions of preemption victims, PodGroup status patches and Events. Each runs as a task
of its own, so a pass never waits on the apiserver; the dispatcher keeps the tasks in flight
and gives them ``shutdown_grace`` seconds to end when the scheduler stops.

What the apiserver answered goes back as values (`Outcome`): a refused bind is `BindRefused`
(the queue backs the gang off), a bound gang `Bound`, and `Settled` marks a gang whose bind or
roll-back ended, so the next pass looks at it again.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from crdkit.client import Conflict, KubernetesError, NotFound, PatchType, Preconditions
from crdkit.resources import Pod
from crdkit.scheduling.binder import BindError
from crdkit.scheduling.decisions import (
    DISRUPTION_TARGET,
    PREEMPTION_BY_SCHEDULER,
    Bind,
    Evict,
    Later,
    Reserve,
    RollBack,
    Wait,
    WriteStatus,
)
from crdkit.scheduling.evictions import Evictions
from crdkit.scheduling.groups.api import now_text
from crdkit.scheduling.mirror import pod_key
from crdkit.scheduling.pending import GroupRef
from crdkit.scheduling.status_writer import StatusWriter

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Iterable

    from crdkit.client import Client
    from crdkit.resources import KubernetesObject
    from crdkit.runtime.events import EventRecorder
    from crdkit.runtime.store import Store
    from crdkit.scheduling.binder import Binder
    from crdkit.scheduling.decisions import Decision
    from crdkit.scheduling.mirror import ClusterMirror
    from crdkit.scheduling.pending import PendingGroup
    from crdkit.scheduling.reporting import Reporter

__all__ = [
    "DISRUPTION_TARGET",
    "PREEMPTION_BY_SCHEDULER",
    "BindRefused",
    "Bound",
    "Dispatcher",
    "Outcome",
    "Settled",
]

log = logging.getLogger("crdkit.scheduling.scheduler")


@dataclass(frozen=True)
class BindRefused:
    """The apiserver refused a pod of the gang's bind; what was bound is rolled back."""

    ref: GroupRef


@dataclass(frozen=True)
class Bound:
    """Every pod of the gang is bound."""

    ref: GroupRef


@dataclass(frozen=True)
class Settled:
    """The gang's bind or roll-back ended, either way: look at it again."""

    ref: GroupRef


Outcome = BindRefused | Bound | Settled


class Dispatcher:
    """See the module docstring. ``later`` takes `Later` decisions (the queue's); ``outcome``
    hears what the apiserver answered."""

    def __init__(
        self,
        client: Client,
        binder: Binder,
        recorder: EventRecorder,
        mirror: ClusterMirror,
        pods: Store[Pod],
        reporter: Reporter,
        *,
        later: Callable[[GroupRef, float], None],
        outcome: Callable[[Outcome], None],
        shutdown_grace: float,
    ) -> None:
        self._client = client
        self._binder = binder
        self._recorder = recorder
        self._mirror = mirror
        self._pods = pods
        self._status = StatusWriter(client, reporter)
        self._later = later
        self._outcome = outcome
        self.shutdown_grace = shutdown_grace
        self._tasks: set[asyncio.Task[None]] = set()
        self._binding: set[GroupRef] = set()
        self._rolling_back: set[GroupRef] = set()
        """Gangs whose bound pods are being deleted: left alone until that ends, so a pass in
        the meantime neither rolls them back again nor places them beside pods on their way
        out."""
        self._evictions = Evictions(pods)
        """Victim gangs whose eviction is under way here, until the pod cache shows it: their
        marked pods are this process's own doing, not an eviction a stopped scheduler left to
        finish."""

    def busy(self, ref: GroupRef) -> bool:
        """A bind, roll-back or eviction of the gang is under way (it is marked again when
        it ends, or by its pods' events once the cache shows an eviction)."""
        return ref in self._binding or ref in self._rolling_back or self._evictions.busy(str(ref))

    @property
    def in_flight(self) -> bool:
        """A bind or an API call is under way."""
        return bool(self._binding or self._tasks)

    def apply(self, decisions: Iterable[Decision]) -> None:
        """Perform ``decisions`` in order; API calls start as tasks, none is awaited here."""
        for decision in decisions:
            match decision:
                case Later(ref, delay):
                    self._later(ref, delay)
                case Bind():
                    self._binding.add(decision.group.ref)
                    self._spawn(self._bind(decision))
                case Wait(group, reason, message):
                    self._spawn(self._report_waiting(group, reason, message))
                case WriteStatus(group, waiting):
                    self._spawn(self._write_status(group, waiting))
                case RollBack(group, evicting):
                    self._rolling_back.add(group.ref)
                    self._spawn(self._roll_back(group, evicting=evicting))
                case Evict():
                    names = ", ".join(victim.ref for victim in decision.victims)
                    log.info("%s preempts %s in %s", decision.ref, names, decision.where)
                    self._evictions.begin(victim.ref for victim in decision.victims)
                    self._spawn(self._evict(decision))
                case Reserve(ref, reservation):
                    log.info(
                        "%s holds %s (%d nodes)", ref, reservation.where(), len(reservation.nodes)
                    )

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Let the calls in flight end (they are short: cutting a gang's bind in the middle
        would roll it back), cancelling what is left after ``shutdown_grace``."""
        if self._tasks:
            _, late = await asyncio.wait(set(self._tasks), timeout=self.shutdown_grace)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)

    # -- binds and roll-backs ---------------------------------------------------------------

    async def _bind(self, decision: Bind) -> None:
        group, reservation, placement = decision.group, decision.reservation, decision.placement
        ref = group.ref
        pods = {pod_key(p.metadata.namespace, p.metadata.name): p for p in group.pending}
        try:
            await self._binder.bind(reservation)
        except BindError as error:
            self._outcome(BindRefused(ref))
            message = f"binding rejected: {error}"
            log.warning("%s: %s", ref, message)
            for binding in reservation.bindings:
                await self._event(pods[binding.key], "Warning", "FailedScheduling", message)
            return
        finally:
            self._binding.discard(ref)
            self._outcome(Settled(ref))
        self._outcome(Bound(ref))
        where = ", ".join(f"{k}={v}" for k, v in placement.domain.items()) or "across domains"
        for binding in reservation.bindings:
            await self._event(
                pods[binding.key],
                "Normal",
                "Scheduled",
                f"Successfully assigned {binding.key} to {binding.node} (gang {ref}, {where})",
            )

    async def _roll_back(self, group: PendingGroup, *, evicting: bool = False) -> None:
        try:
            await self._delete_bound(group, evicting=evicting)
        finally:
            self._rolling_back.discard(group.ref)
            self._outcome(Settled(group.ref))

    async def _delete_bound(self, group: PendingGroup, *, evicting: bool = False) -> None:
        message = (
            f"{len(group.bound)} of the gang's pods were bound and the other "
            f"{len(group.pending)} do not fit beside them: deleting the bound pods"
        )
        bound = group.bound
        if evicting:
            message = (
                "the gang's eviction for a preemption was cut short (its pods are marked "
                f"{DISRUPTION_TARGET}): deleting its other bound pods"
            )
            bound = [pod for pod in bound if pod.metadata.deletion_timestamp is None]
        log.warning("%s: %s", group.ref, message)
        for pod in bound:
            await self._event(pod, "Warning", "GangRolledBack", message)
            try:
                # Only the pod seen bound: its controller may have made a new one of that name.
                await self._client.delete(
                    Pod,
                    pod.metadata.name or "",
                    namespace=pod.metadata.namespace,
                    # A victim keeps its grace period, as `Evict` gives it; a gang torn
                    # mid-bind never ran, and goes at once.
                    grace_period_seconds=None if evicting else 0,
                    preconditions=Preconditions(uid=pod.metadata.uid),
                )
            except (NotFound, Conflict):
                pass  # gone already, or already replaced
            except KubernetesError as error:
                log.warning("%s: could not delete %s: %s", group.ref, pod.metadata.name, error)
            else:
                if evicting:
                    key = pod_key(pod.metadata.namespace, pod.metadata.name)
                    self._evictions.deleted(str(group.ref), key, pod.metadata.uid)
            if not evicting:
                # Gone at once: its room is free now. A victim deleted with its grace period
                # holds its node until it is gone, and its events tell the mirror (counted
                # free at once, a preemptor was bound beside its terminating pods).
                self._mirror.remove_pod(pod)

    async def _evict(self, decision: Evict) -> None:
        """Delete every pod of each victim gang, with its grace period, after an Event on it
        naming the preemptor and the ``DisruptionTarget`` condition kube-scheduler writes
        before it preempts (a Job's ``podFailurePolicy`` reads it to not count the pod as
        failed)."""
        try:
            await self._evict_victims(decision)
        finally:
            self._evictions.end(victim.ref for victim in decision.victims)
            for victim in decision.victims:  # looked at again, as a gang rolled back is
                self._outcome(Settled(GroupRef.parse(victim.ref)))

    async def _evict_victims(self, decision: Evict) -> None:
        ref, priority = decision.ref, decision.priority
        for victim in decision.victims:
            for pod in victim.pods:
                namespace, _, name = pod.key.partition("/")
                seen = self._pods.get_by_name(name, namespace)
                if seen is not None:
                    said = (
                        f"Evicted: the gang {decision.why}"
                        if victim.ref == str(ref)  # its own limit, not another gang's room
                        else f"Preempted by gang {ref} ({decision.why or f'priority {priority}'}) "
                        f"to free {decision.where}"
                    )
                    await self._event(
                        seen,
                        "Warning",
                        "Preempted",
                        f"{said}; the whole gang {victim.ref} (priority {victim.priority}) is "
                        f"evicted",
                    )
                    if seen.metadata.uid == pod.uid:  # not a new pod of that name
                        await self._disruption_target(seen, said)
                try:
                    await self._client.delete(
                        Pod, name, namespace=namespace, preconditions=Preconditions(uid=pod.uid)
                    )
                except (NotFound, Conflict):
                    pass  # gone already, or replaced by a new pod of that name
                except KubernetesError as error:
                    log.warning("%s: could not evict %s: %s", ref, pod.key, error)
                else:
                    self._evictions.deleted(victim.ref, pod.key, pod.uid)

    async def _disruption_target(self, pod: Pod, message: str) -> None:
        """Mark ``pod`` about to be preempted. A strategic merge patch adds the condition to
        the pod's others (merged by type). When the write fails the pod is evicted all the
        same: the preemptor waits for its victims to go, and one left would hold it forever
        (kube-scheduler would leave the pod and try again)."""
        condition = {
            "type": DISRUPTION_TARGET,
            "status": "True",
            "reason": PREEMPTION_BY_SCHEDULER,
            "message": message,
            "lastTransitionTime": now_text(),
        }
        try:
            await self._client.patch(
                Pod,
                pod.metadata.name or "",
                {"status": {"conditions": [condition]}},
                namespace=pod.metadata.namespace,
                patch_type=PatchType.STRATEGIC,
                subresource="status",
            )
        except NotFound:
            pass  # gone already: the delete finds it gone too
        except KubernetesError as error:
            log.warning(
                "could not mark %s a disruption target: %s",
                pod_key(pod.metadata.namespace, pod.metadata.name),
                error,
            )

    # -- reports ----------------------------------------------------------------------------

    async def _report_waiting(self, group: PendingGroup, reason: str, message: str) -> None:
        log.info("%s waits: %s", group.ref, message)
        # A gang whose controller is still making its pods is healthy: it is said as Normal, so
        # an alert on FailedScheduling warnings does not fire for every job as it starts.
        type_: Literal["Normal", "Warning"] = "Warning"
        said = "FailedScheduling"
        if reason == "WaitingForPods":
            type_, said = "Normal", "WaitingForPods"
        # A gated pod is told only that it is gated (kube-scheduler does not even try it).
        told = [*group.pending, *group.gated] if reason == "SchedulingGated" else group.pending
        for pod in told:
            await self._event(pod, type_, said, f"{reason}: {message}")
        if group.podgroup is not None:
            # The gang is told too: its PodGroup is where a user looks first.
            await self._event(group.podgroup, type_, said, f"{reason}: {message}")
        await self._write_status(group, (reason, message))

    async def _event(
        self,
        about: KubernetesObject,
        type_: Literal["Normal", "Warning"],
        reason: str,
        note: str,
    ) -> None:
        await self._recorder.event(about, type_, reason, note[:1024], action="Scheduling")

    async def _write_status(self, group: PendingGroup, waiting: tuple[str, str] | None) -> None:
        await self._status.write(group, waiting, binding=group.ref in self._binding)
