"""The gang scheduler's Prometheus metrics: its queue and its reservations.

Named like kube-scheduler's (``scheduler_pending_pods``, ``scheduler_*_duration_seconds``)
under crdkit's prefix, since they count gangs rather than pods. Registered once per registry
(`crdkit.runtime.metrics.families_in`), next to the runtime's.
"""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from crdkit.runtime.metrics import families_in

__all__ = ["SchedulerMetrics", "scheduler_metrics"]

# kube-scheduler's pod scheduling SLI buckets: 10 ms doubling to about 10 minutes.
_WAIT_BUCKETS = tuple(0.01 * 2**i for i in range(20))


@dataclass(frozen=True)
class SchedulerMetrics:
    pending_gangs: Gauge
    gang_wait: Histogram
    reservations: Gauge
    reserved_nodes: Gauge
    gangs_bound: Counter
    preemptions: Counter


def _create(registry: CollectorRegistry) -> SchedulerMetrics:
    return SchedulerMetrics(
        pending_gangs=Gauge(
            "crdkit_scheduler_pending_gangs",
            "Gangs that did not fit when last tried and wait in line, by scheduler and priority",
            ("scheduler", "priority"),
            registry=registry,
        ),
        gang_wait=Histogram(
            "crdkit_scheduler_gang_wait_duration_seconds",
            "Seconds from a gang's arrival (its PodGroup's or first pod's creation) to its "
            "bind, by scheduler and priority",
            ("scheduler", "priority"),
            buckets=_WAIT_BUCKETS,
            registry=registry,
        ),
        reservations=Gauge(
            "crdkit_scheduler_reservations",
            "Reservations held for waiting gangs, by scheduler",
            ("scheduler",),
            registry=registry,
        ),
        reserved_nodes=Gauge(
            "crdkit_scheduler_reserved_nodes",
            "Nodes held for waiting gangs, by scheduler",
            ("scheduler",),
            registry=registry,
        ),
        gangs_bound=Counter(
            "crdkit_scheduler_gangs_bound_total",
            "Gangs bound whole, by scheduler",
            ("scheduler",),
            registry=registry,
        ),
        preemptions=Counter(
            "crdkit_scheduler_preemption_victims_total",
            "Gangs evicted whole to make room for a gang of higher priority, by scheduler",
            ("scheduler",),
            registry=registry,
        ),
    )


def scheduler_metrics(registry: CollectorRegistry | None = None) -> SchedulerMetrics:
    """The scheduler's metric families in ``registry`` (the process-wide one by default)."""
    return families_in(registry, _create)
