"""How long a pod says it runs: the run-time bounds that backfill into held nodes and the
timing of reservations are judged by.

A pod declares a bound with ``spec.activeDeadlineSeconds`` (which the kubelet enforces) or the
`MAX_RUNTIME_ANNOTATION` (for schedulers that only learn it from the pod); the smaller wins. A
pod that declares neither has no known end, and nothing is planned around it.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crdkit.resources import Pod

__all__ = ["MAX_RUNTIME_ANNOTATION", "pod_end", "pod_runtime_bound"]

MAX_RUNTIME_ANNOTATION = "scheduling.crdkit.io/max-runtime-seconds"
"""A pod's declared bound on its run time, in seconds (a positive number), for schedulers
that only learn it from the pod; ``spec.activeDeadlineSeconds`` is the kubelet-enforced one."""


def pod_runtime_bound(pod: Pod) -> float | None:
    """The longest the pod says it runs, in seconds: the smaller of its
    ``spec.activeDeadlineSeconds`` and `MAX_RUNTIME_ANNOTATION`; None if it says neither.

    A malformed annotation is a ``ValueError`` naming it."""
    bounds: list[float] = []
    deadline = getattr(pod.spec, "active_deadline_seconds", None)
    if deadline is not None:
        bounds.append(float(deadline))
    text = pod.metadata.annotations.get(MAX_RUNTIME_ANNOTATION)
    if text is not None:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value <= 0:
            raise ValueError(
                f"metadata.annotations[{MAX_RUNTIME_ANNOTATION}]: expected a positive number "
                f"of seconds, got {text!r}"
            )
        bounds.append(value)
    return min(bounds) if bounds else None


def pod_end(pod: Pod, now: float) -> float | None:
    """When the pod will have ended at the latest (epoch seconds), from its start (``now`` if
    it has not started) and its run-time bound; None if it declares none."""
    bound = pod_runtime_bound(pod)
    if bound is None:
        return None
    started = pod.status.start_time if pod.status is not None else None
    start = started.timestamp() if isinstance(started, datetime) else now
    return start + bound
