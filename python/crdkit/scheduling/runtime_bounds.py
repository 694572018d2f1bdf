"""How long a pod says it runs: the run-time bounds that start plans, backfill into held nodes
and the timing of reservations are judged by.

A pod declares a bound in one of three places, trusted in this order, and the most trusted one
it fills in is its bound:

1. ``spec.activeDeadlineSeconds``: the kubelet ends the pod then, whatever it claims elsewhere;
2. Kueue's `KUEUE_MAX_EXEC_TIME_LABEL` (``kueue.x-k8s.io/max-exec-time-seconds``), which Kueue
   enforces for the whole workload, on the pod's labels (a Job's pod template carries it);
3. crdkit's `MAX_RUNTIME_ANNOTATION`, for schedulers that only learn it from the pod.

A pod that declares none has no known end, and nothing is planned around it. A malformed label
or annotation is an error naming it (the gang waits with that reason).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from crdkit.resources import Pod

__all__ = [
    "KUEUE_MAX_EXEC_TIME_LABEL",
    "MAX_RUNTIME_ANNOTATION",
    "START_TIME_PRECISION",
    "pod_end",
    "pod_runtime_bound",
    "stamp",
]

MAX_RUNTIME_ANNOTATION = "scheduling.crdkit.io/max-runtime-seconds"
"""A pod's declared bound on its run time, in seconds (a positive number), for schedulers
that only learn it from the pod; ``spec.activeDeadlineSeconds`` is the kubelet-enforced one."""

KUEUE_MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
"""Kueue's label for a workload's maximum execution time, in whole seconds."""

START_TIME_PRECISION = 1.0
"""``status.startTime`` keeps whole seconds: a pod may have started up to this much after the
time it shows, so its declared end is counted from the time shown plus this."""


def _positive(text: str, where: str, *, whole: bool) -> float:
    try:
        value = float(int(text)) if whole else float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        kind = "a positive whole number" if whole else "a positive number"
        raise ValueError(f"{where}: expected {kind} of seconds, got {text!r}")
    return value


def _declared(mapping: Mapping[str, str] | None, key: str) -> str | None:
    return None if mapping is None else mapping.get(key)


def pod_runtime_bound(pod: Pod) -> float | None:
    """The longest the pod says it runs, in seconds, from the most trusted place it says so
    (see the module docstring); None if it says it nowhere.

    A malformed label or annotation is a ``ValueError`` naming it."""
    deadline = getattr(pod.spec, "active_deadline_seconds", None)
    if deadline is not None:
        return float(deadline)
    label = _declared(pod.metadata.labels, KUEUE_MAX_EXEC_TIME_LABEL)
    if label is not None:
        return _positive(label, f"metadata.labels[{KUEUE_MAX_EXEC_TIME_LABEL}]", whole=True)
    annotation = _declared(pod.metadata.annotations, MAX_RUNTIME_ANNOTATION)
    if annotation is not None:
        where = f"metadata.annotations[{MAX_RUNTIME_ANNOTATION}]"
        return _positive(annotation, where, whole=False)
    return None


def pod_end(
    pod: Pod, now: float, fallback: Callable[[], float | None] | None = None
) -> float | None:
    """When the pod will have ended at the latest (epoch seconds), from its start (``now`` if
    it has not started; the shown start plus `START_TIME_PRECISION` if it has) and its run-time
    bound (``fallback()`` when it declares none: its queue's maximum run time, looked up only
    then); None without either."""
    bound = pod_runtime_bound(pod)
    if bound is None and fallback is not None:
        bound = fallback()
    if bound is None:
        return None
    started = pod.status.start_time if pod.status is not None else None
    if isinstance(started, datetime):
        return started.timestamp() + START_TIME_PRECISION + bound
    return now + bound


def stamp(epoch: float) -> str:
    """A time derived from declared ends (a planned start, the moment room is sure) as messages
    write it: UTC, whole seconds, as the API writes its times."""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
