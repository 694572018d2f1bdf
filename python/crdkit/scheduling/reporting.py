"""Why a gang waits, said once: every ``FailedScheduling`` report and PodGroup status the
scheduler writes is decided here.

- A report is written once per *topic* (default: its message). A new message of the same topic
  (a gang whose pods are being created, one more each pass) only rewrites the PodGroup's status,
  so a controller creating a gang pod by pod causes no storm of Events.
- A new message of the same reason waits out a per-gang backoff that doubles from the first to
  the last of ``report_backoff``, as kube-scheduler backs off a pod's attempts, each of which is
  an Event. Without it, hundreds of waiting gangs wrote Events on every pod at every pass, and
  the apiserver, busy with them, delivered the watch events that free nodes late.
- Explaining a gang walks every node per task, so an explanation is reused while neither the
  gang nor the placer's reason changed (for ``explain_refresh`` seconds), and one explanation
  serves every gang of the same shape until the mirror's state changes.
- The status written is remembered, so a pass that changes nothing writes nothing.

`Reporter` returns decisions (`Wait`, `WriteStatus`, `Later`) and makes no API call; the
dispatcher writes them, asking `status_to_write` at the moment it writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crdkit.scheduling.decisions import Decision, Later, Wait, WriteStatus
from crdkit.scheduling.explanation import explain
from crdkit.scheduling.groups import GROUP_APIS

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable

    from crdkit import _placer
    from crdkit.scheduling.mirror import ClusterMirror
    from crdkit.scheduling.pending import GroupRef, PendingGroup

__all__ = ["Reporter"]


class Reporter:
    """See the module docstring. ``report_backoff``: a waiting gang's first and longest wait
    between two reports of the same reason with a new message (``(0, 0)``: every change is
    written at once)."""

    def __init__(
        self,
        mirror: ClusterMirror,
        clock: Callable[[], float],
        report_backoff: tuple[float, float],
        explain_refresh: float,
    ) -> None:
        self._mirror = mirror
        self._clock = clock
        self.report_backoff = report_backoff
        self.explain_refresh = explain_refresh
        self.waiting: set[GroupRef] = set()
        """Gangs told they wait (a pass looks at them again when capacity frees)."""
        self._reported: dict[GroupRef, tuple[str, str]] = {}
        """The last report of each gang: its topic and message."""
        self._backoff: dict[GroupRef, tuple[float, float, bool]] = {}
        """Per waiting gang: when its next report of the same reason may be written, the
        interval that set it, and whether a pass is already called for then."""
        self.said: dict[GroupRef, tuple[str, str]] = {}
        """The last waiting report written for each gang, ``(reason, message)``: a status written
        without a report of its own keeps it (the cached PodGroup may not show it yet)."""
        self._status: dict[GroupRef, tuple[tuple[str, str], ...]] = {}
        """The status last written for each PodGroup (compared, so nothing is written twice)."""
        self._explained: dict[GroupRef, tuple[Hashable, str | None, float, str]] = {}
        """Per waiting gang: its shape and the placer reason it was explained for, when, and the
        message."""
        self._shape_explained: dict[tuple[Hashable, str | None], tuple[str, bool]] = {}
        self.never_fits: set[GroupRef] = set()
        """Waiting gangs last explained as never fitting the cluster, even with every node
        empty (the view shows them with no place in line)."""
        self._shape_explained_at: tuple[int, int] = (-1, -1)
        self.explanations = 0
        """Explanations computed (not reused), for the bench and tests."""

    def wait(
        self,
        group: PendingGroup,
        reason: str,
        message: str,
        out: list[Decision],
        *,
        topic: str | None = None,
        tail: Callable[[], str] | None = None,
    ) -> None:
        """Record why ``group`` waits, once per ``topic`` (default: the message). ``tail``
        adds to what is written (the place in line) without being a reason to write again."""
        ref = group.ref
        self.waiting.add(ref)
        report = (message if topic is None else topic, message)
        last = self._reported.get(ref)
        if last == report:
            return  # already said: no event storm on every pass
        if not self.may_report(ref, reason, out):
            return  # said again once its backoff ends (a pass is called for then)
        self._reported[ref] = report
        if tail is not None:
            message += tail()
        self.said[ref] = (reason, message)
        if last is not None and last[0] == report[0]:
            out.append(WriteStatus(group, (reason, message)))
        else:
            out.append(Wait(group, reason, message))

    def may_report(self, ref: GroupRef, reason: str, out: list[Decision]) -> bool:
        """Whether a new report of why ``ref`` waits may be written now: a new reason at once,
        a new message of the same reason once its backoff ends (a `Later` in ``out`` calls a
        pass for then)."""
        first, longest = self.report_backoff
        now = self._clock()
        said = self.said.get(ref)
        if said is None or said[0] != reason or longest == 0:
            self._backoff[ref] = (now + first, first, False)
            return True
        allowed_at, interval, called = self._backoff.get(ref, (now, 0.0, False))
        if now < allowed_at:
            if not called:
                out.append(Later(ref, allowed_at - now))
                self._backoff[ref] = (allowed_at, interval, True)
            return False
        interval = min(max(interval * 2, first), longest)
        self._backoff[ref] = (now + interval, interval, False)
        return True

    def explanation(
        self,
        ref: GroupRef,
        shape: Hashable,
        placement: _placer.Outcome,
        gang: Callable[[], _placer.Gang],
    ) -> str:
        """Why the gang waits: explained again only when its shape or the placer's reason
        changed, or the last explanation is ``explain_refresh`` seconds old."""
        now = self._clock()
        last = self._explained.get(ref)
        if (
            last is not None
            and last[0] == shape
            and last[1] == placement.reason
            and now - last[2] < self.explain_refresh
        ):
            return last[3]
        self.never_fits.discard(ref)
        state = (self._mirror.nodes_version, self._mirror.usage_version)
        if state != self._shape_explained_at:
            self._shape_explained.clear()
            self._shape_explained_at = state
        key = (shape, placement.reason)
        found = self._shape_explained.get(key)
        if found is None:
            explained = explain(self._mirror, gang(), placement)
            self.explanations += 1
            found = self._shape_explained[key] = (explained.message, explained.never_fits)
        message, never = found
        if never:
            self.never_fits.add(ref)
        self._explained[ref] = (shape, placement.reason, now, message)
        return message

    def status_to_write(
        self, group: PendingGroup, waiting: tuple[str, str] | None, binding: bool
    ) -> dict[str, Any] | None:
        """The PodGroup's status as it should be now, or None when there is none to write or
        it was written already. Asked when the write happens, not when it was decided."""
        podgroup, ref = group.podgroup, group.ref
        if podgroup is None:
            return None
        if waiting is None and ref in self.waiting:
            # Still waiting: say so again. Built from the cached PodGroup alone, a status
            # written while the report's own write is not yet in the cache would erase it.
            waiting = self.said.get(ref)
        status = GROUP_APIS[ref.api].status(podgroup, group.counts, binding, waiting)
        key = tuple(sorted((k, repr(v)) for k, v in status.items() if k != "scheduleStartTime"))
        if self._status.get(ref) == key:
            return None  # written already: a waiting report that changed nothing writes nothing
        self._status[ref] = key
        return status

    def status_unwritten(self, ref: GroupRef) -> None:
        """The status write failed, or the PodGroup changed: the next write compares afresh."""
        self._status.pop(ref, None)

    def placing(self, ref: GroupRef) -> None:
        """The gang is being bound: it no longer waits."""
        self.waiting.discard(ref)
        self._explained.pop(ref, None)
        self.never_fits.discard(ref)

    def bound(self, ref: GroupRef) -> None:
        """The gang was bound: a later wait is a new story."""
        self._reported.pop(ref, None)
        self._backoff.pop(ref, None)
        self.said.pop(ref, None)

    def forget(self, ref: GroupRef) -> None:
        """The gang is gone."""
        self.bound(ref)
        self.waiting.discard(ref)
        self._status.pop(ref, None)
        self._explained.pop(ref, None)
        self.never_fits.discard(ref)
