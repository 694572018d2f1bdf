"""The gangs as the view shows them: one row per gang with pods this scheduler places, waiting
(in line order) or running, with its expected start, its reservation and one short reason.

A gang runs when every pod it has that has not finished is bound (or assumed bound); it waits
while any is pending. Its place in line is the scheduler's line (`GangScheduler.queue`), less
the gangs that never fit: waiting does not help them, so they have no place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from crdkit.scheduling.mirror import pod_key
from crdkit.scheduling.pending import GROUP_INDEX, GroupRef, finished

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from crdkit.resources import Pod
    from crdkit.runtime.store import Store
    from crdkit.scheduling.outlook import Outlook
    from crdkit.scheduling.queues.gate import QueueGate
    from crdkit.scheduling.reporting import Reporter
    from crdkit.scheduling.reservations import DomainReservation
    from crdkit.scheduling.view.format import GangView

__all__ = ["REASON_CHARS", "GangSources", "gang_key", "gang_views", "short_reason"]

REASON_CHARS = 200
"""The longest reason a row carries; the full one is in the PodGroup's status and Events."""


def gang_key(ref: GroupRef | str) -> str:
    """How the view names a gang (a `GroupRef` or its text): ``namespace/name``, the same in
    its row, on the nodes its pods hold, on the nodes held for it and in its starts, so the
    page can match them."""
    parsed = GroupRef.parse(ref) if isinstance(ref, str) else ref
    return f"{parsed.namespace}/{parsed.name}"


def short_reason(message: str) -> str:
    """The first clause of a waiting report: what it waits for, without the per-task counts,
    the reservation's and the line's notes the full message goes on with."""
    head = message.split("; ", 1)[0].split(" [in line:", 1)[0].strip()
    if len(head) <= REASON_CHARS:
        return head
    return head[: REASON_CHARS - 1].rsplit(" ", 1)[0] + "…"


def _domain(reservation: DomainReservation) -> str:
    if reservation.domain is not None:
        return reservation.domain
    return f"{len(reservation.nodes)} nodes"


def _bound_at(pod: Pod) -> float | None:
    for condition in (pod.status.conditions if pod.status else None) or ():
        if condition.type == "PodScheduled" and condition.status == "True":
            stamp = condition.last_transition_time
            return None if stamp is None else stamp.timestamp()
    return None


def _created(pod: Pod) -> float | None:
    stamp = pod.metadata.creation_timestamp
    return None if stamp is None else stamp.timestamp()


@dataclass(frozen=True)
class GangSources:
    """What the rows are read from: the scheduler's parts, all read and none changed."""

    pods: Store[Pod]
    """The Pod informer's store, indexed by gang (`GROUP_INDEX`)."""
    read: Callable[[str], Pod | None]
    """A pod by key, decoded once (`PodReads.get`)."""
    requests: Callable[[Pod], Mapping[str, int]]
    """A pod's requests in milli-units (`ClusterMirror.requests`)."""
    node_of: Callable[[str], str | None]
    """The node a pod is counted on, assumed binds included (`ClusterMirror.node_of`)."""
    line: Callable[[], Sequence[tuple[str, int]]]
    reporter: Reporter
    outlook: Outlook
    reservations: Mapping[GroupRef, DomainReservation]
    gate: QueueGate | None


def gang_views(sources: GangSources, resource: str, now: float) -> list[GangView]:
    """Every gang with pods, waiting ones first in line order, then running ones by name."""
    line = sources.line()
    order = {text: index for index, (text, _) in enumerate(line)}
    reporter, gate = sources.reporter, sources.gate
    position = 0
    positions: dict[str, int] = {}
    for text, _ in line:
        if GroupRef.parse(text) not in reporter.never_fits:
            position += 1
            positions[text] = position
    waiting: list[tuple[int, GangView]] = []  # with its index in the line (last if not in it)
    running: list[GangView] = []
    for text in sources.pods.index_values(GROUP_INDEX):
        pods = [
            pod
            for key in sources.pods.index_keys(GROUP_INDEX, text)
            if (pod := sources.read(key)) is not None and not finished(pod)
        ]
        if not pods:
            continue
        ref = GroupRef.parse(text)
        gpus = sum(sources.requests(pod).get(resource, 0) for pod in pods) // 1000
        priority = max((pod.spec.priority or 0) for pod in pods)
        if all(_placed(pod, sources.node_of) for pod in pods):
            holding = None if gate is None else gate.holdings.get(text)
            bound = [at for pod in pods if (at := _bound_at(pod)) is not None]
            running.append(
                _row(
                    ref,
                    pods,
                    state="running",
                    gpus=gpus,
                    priority=priority,
                    since=max(bound, default=now),
                    queue=None if holding is None else holding[0],
                )
            )
            continue
        never = ref in reporter.never_fits
        expected = sources.outlook.expected(ref)
        said = reporter.said.get(ref)
        reservation = None if never else sources.reservations.get(ref)
        created = [at for pod in pods if (at := _created(pod)) is not None]
        row = _row(
            ref,
            pods,
            state="waiting",
            gpus=gpus,
            priority=priority,
            since=min(created, default=now),
            queue=None if gate is None else gate.waiting.get(ref),
            position=None if never else positions.get(text),
            expected_start=None if never else expected.start,
            expected_note="it never fits this cluster" if never else expected.note,
            promised=expected.promised,
            reserved=None if reservation is None else _domain(reservation),
            reason="" if said is None else short_reason(said[1]),
            never_fits=never,
        )
        waiting.append((order.get(text, len(order)), row))
    # The line keys gangs by their ref's text (API and all), the rows by namespace/name.
    waiting.sort(key=lambda item: (item[0], item[1]["gang"]))
    running.sort(key=lambda row: row["gang"])
    return [*(row for _, row in waiting), *running]


def _placed(pod: Pod, node_of: Callable[[str], str | None]) -> bool:
    if pod.spec.node_name:
        return True
    return node_of(pod_key(pod.metadata.namespace, pod.metadata.name)) is not None


def _row(
    ref: GroupRef,
    pods: Sequence[Pod],
    *,
    state: Literal["waiting", "running"],
    gpus: int,
    priority: int,
    since: float,
    queue: str | None,
    position: int | None = None,
    expected_start: float | None = None,
    expected_note: str = "",
    promised: float | None = None,
    reserved: str | None = None,
    reason: str = "",
    never_fits: bool = False,
) -> GangView:
    return {
        "gang": gang_key(ref),
        "api": ref.api,
        "state": state,
        "queue": queue,
        "priority": priority,
        "position": position,
        "pods": len(pods),
        "gpus": gpus,
        "since": since,
        "expected_start": expected_start,
        "expected_note": expected_note,
        "promised": promised,
        "reserved": reserved,
        "reason": reason,
        "never_fits": never_fits,
    }
