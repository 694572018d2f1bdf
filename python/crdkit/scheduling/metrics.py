"""The gang scheduler's Prometheus metrics: its queue and its reservations.

Named like kube-scheduler's (``scheduler_pending_pods``, ``scheduler_*_duration_seconds``)
under crdkit's prefix, since they count gangs rather than pods. Registered once per registry
(`crdkit.runtime.metrics.families_in`), next to the runtime's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from crdkit.runtime.metrics import families_in
from crdkit.scheduling.decisions import Bind, Evict
from crdkit.scheduling.pending import NEVER, arrival

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crdkit.scheduling.decisions import Decision

__all__ = ["SchedulerMetrics", "count_decisions", "scheduler_metrics"]

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
    queue_share: Gauge
    queue_pending: Gauge
    queue_admitted: Gauge
    queue_reclaimed: Counter


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
        # Kueue's names where it has one (kueue_cluster_queue_weighted_share,
        # kueue_pending_workloads, kueue_admitted_active_workloads, kueue_preempted_workloads_total
        # with reason InCohortReclamation), under crdkit's prefix: a gang is a workload.
        queue_share=Gauge(
            "crdkit_queue_weighted_share",
            "A queue's weighted share of its cohort: what it borrows beyond its quota as a "
            "fraction of the cohort tree's quota, divided by its weight (0: borrowing nothing)",
            ("scheduler", "queue"),
            registry=registry,
        ),
        queue_pending=Gauge(
            "crdkit_queue_pending_workloads",
            "Gangs of a queue waiting to be admitted and placed",
            ("scheduler", "queue"),
            registry=registry,
        ),
        queue_admitted=Gauge(
            "crdkit_queue_admitted_active_workloads",
            "Gangs of a queue holding its quota (running or bound)",
            ("scheduler", "queue"),
            registry=registry,
        ),
        queue_reclaimed=Counter(
            "crdkit_queue_preempted_workloads_total",
            "Gangs evicted whole by a queue reclaiming its quota, by the reclaiming queue",
            ("scheduler", "preempting_queue", "reason"),
            registry=registry,
        ),
    )


def scheduler_metrics(registry: CollectorRegistry | None = None) -> SchedulerMetrics:
    """The scheduler's metric families in ``registry`` (the process-wide one by default)."""
    return families_in(registry, _create)


def count_decisions(
    metrics: SchedulerMetrics | None, name: str, decisions: Sequence[Decision], now: float
) -> None:
    """The metrics of what a pass decided: each bound gang's wait (from its arrival to
    ``now``, epoch seconds) and each preempted gang."""
    if metrics is None:
        return
    for decision in decisions:
        if isinstance(decision, Bind):
            group = decision.group
            arrived = arrival(group)[0]
            if arrived != NEVER:
                waited = max(now - arrived.timestamp(), 0.0)
                priority = max((p.spec.priority or 0 for p in group.pending), default=0)
                metrics.gang_wait.labels(name, str(priority)).observe(waited)
        elif isinstance(decision, Evict):
            metrics.preemptions.labels(name).inc(len(decision.victims))
