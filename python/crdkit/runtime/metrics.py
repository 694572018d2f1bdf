"""The runtime's Prometheus metrics, under controller-runtime's names and labels.

Dashboards and alerts written for Go operators (``workqueue_depth``,
``controller_runtime_reconcile_total``, ...) then work unchanged on a crdkit operator.

The metric families live in a :class:`prometheus_client.CollectorRegistry`. A registry can hold a
name only once, so :func:`runtime_metrics` creates the families once per registry and hands the
same :class:`RuntimeMetrics` to every queue and controller that shares it. Tests pass their own
registry so that they do not collide.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["RuntimeMetrics", "families_in", "runtime_metrics"]

# client-go's workqueue buckets: prometheus.ExponentialBuckets(10e-9, 10, 12), 10 ns .. 1000 s.
_WORKQUEUE_BUCKETS = tuple(1e-8 * 10**i for i in range(12))

# controller-runtime's reconcile-time buckets.
_RECONCILE_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8,
    0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0,
    15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0,
)  # fmt: skip

_QUEUE_LABELS = ("name", "controller")


@dataclass(frozen=True)
class RuntimeMetrics:
    """Every metric family the runtime writes, registered in one registry."""

    registry: CollectorRegistry
    workqueue_depth: Gauge
    workqueue_adds: Counter
    workqueue_queue_duration: Histogram
    workqueue_work_duration: Histogram
    workqueue_unfinished_work: Gauge
    workqueue_longest_running_processor: Gauge
    workqueue_retries: Counter
    reconcile_total: Counter
    reconcile_errors: Counter
    terminal_reconcile_errors: Counter
    reconcile_time: Histogram
    max_concurrent_reconciles: Gauge
    active_workers: Gauge
    leader_election_master_status: Gauge
    informer_decode_errors: Counter
    asyncio_tasks: Gauge


def _create(registry: CollectorRegistry) -> RuntimeMetrics:
    def gauge(name: str, doc: str, labels: tuple[str, ...]) -> Gauge:
        return Gauge(name, doc, labels, registry=registry)

    return RuntimeMetrics(
        registry=registry,
        workqueue_depth=gauge("workqueue_depth", "Current depth of workqueue", _QUEUE_LABELS),
        workqueue_adds=Counter(
            "workqueue_adds_total",
            "Total number of adds handled by workqueue",
            _QUEUE_LABELS,
            registry=registry,
        ),
        workqueue_queue_duration=Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            _QUEUE_LABELS,
            buckets=_WORKQUEUE_BUCKETS,
            registry=registry,
        ),
        workqueue_work_duration=Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            _QUEUE_LABELS,
            buckets=_WORKQUEUE_BUCKETS,
            registry=registry,
        ),
        workqueue_unfinished_work=gauge(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been "
            "observed by work_duration. Large values indicate stuck threads.",
            _QUEUE_LABELS,
        ),
        workqueue_longest_running_processor=gauge(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            _QUEUE_LABELS,
        ),
        workqueue_retries=Counter(
            "workqueue_retries_total",
            "Total number of retries handled by workqueue",
            _QUEUE_LABELS,
            registry=registry,
        ),
        reconcile_total=Counter(
            "controller_runtime_reconcile_total",
            "Total number of reconciliations per controller",
            ("controller", "result"),
            registry=registry,
        ),
        reconcile_errors=Counter(
            "controller_runtime_reconcile_errors_total",
            "Total number of reconciliation errors per controller",
            ("controller",),
            registry=registry,
        ),
        terminal_reconcile_errors=Counter(
            "controller_runtime_terminal_reconcile_errors_total",
            "Total number of terminal reconciliation errors per controller",
            ("controller",),
            registry=registry,
        ),
        reconcile_time=Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            ("controller",),
            buckets=_RECONCILE_BUCKETS,
            registry=registry,
        ),
        max_concurrent_reconciles=gauge(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            ("controller",),
        ),
        active_workers=gauge(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            ("controller",),
        ),
        leader_election_master_status=gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
            "backup, 1 indicates master. 'name' is the string used to identify the lease.",
            ("name",),
        ),
        # crdkit's own (no controller-runtime twin: Go's types decode leniently).
        informer_decode_errors=Counter(
            "crdkit_informer_decode_errors_total",
            "Stored objects an informer's type refused and kept out of its cache, counted once "
            "per object and resourceVersion",
            ("group", "kind"),
            registry=registry,
        ),
        # Set by the metrics server as it answers a scrape, in the loop it serves from: a
        # count that keeps growing is a leak of tasks (watch a soak's, benches/soak.py).
        asyncio_tasks=Gauge(
            "crdkit_asyncio_tasks",
            "Tasks of the operator's event loop not yet done, counted at each scrape",
            registry=registry,
        ),
    )


_by_registry: weakref.WeakKeyDictionary[CollectorRegistry, dict[Callable[..., Any], Any]] = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()

_Families = TypeVar("_Families")


def families_in(
    registry: CollectorRegistry | None, create: Callable[[CollectorRegistry], _Families]
) -> _Families:
    """The metric families ``create`` registers, created once per registry (the process-wide
    one by default) and shared by everyone who asks again with the same ``create``: a registry
    refuses a name it already has. Components above the runtime (the gang scheduler) keep
    their families this way too."""
    target = REGISTRY if registry is None else registry
    with _lock:
        made = _by_registry.setdefault(target, {})
        if create not in made:
            made[create] = create(target)
        return cast("_Families", made[create])


def runtime_metrics(registry: CollectorRegistry | None = None) -> RuntimeMetrics:
    """The runtime's metric families in ``registry`` (the process-wide one by default)."""
    return families_in(registry, _create)
