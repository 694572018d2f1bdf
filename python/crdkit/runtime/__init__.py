"""The controller runtime: client-go's and controller-runtime's model, in asyncio.

::

    Informer ─▶ Store                                    (list + watch, shared per kind)
       │ events, filtered by Predicates
       ▼
    WorkQueue[Request] (dedup, one worker per key, rate-limited retries)
       │
       ▼
    Controller workers ─▶ Reconciler.reconcile(ctx, obj) ─▶ Result | None | TerminalError
       ▲
    Manager: shared informers, one client, leader election (Lease), /metrics, /healthz,
             /readyz, graceful shutdown on SIGTERM/SIGINT; Runnables beside the controllers;
             admission webhooks (Validator, Defaulter) over HTTPS; told by ManagerOptions
             (LeaderElectionOptions, ShardingOptions, MetricsOptions, WebhookServerOptions)

The names operator authors use are re-exported from :mod:`crdkit`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit.runtime.cache import CacheReader
    from crdkit.runtime.conditions import (
        REASON_PATTERN,
        Condition,
        ConditionStatus,
        find_condition,
        is_condition_false,
        is_condition_true,
        remove_condition,
        set_condition,
    )
    from crdkit.runtime.context import Context
    from crdkit.runtime.controller import Controller
    from crdkit.runtime.errors import ControllerError
    from crdkit.runtime.events import EventRecorder, EventType
    from crdkit.runtime.factory import SharedInformerFactory
    from crdkit.runtime.informer import Informer
    from crdkit.runtime.leader import (
        LeaderElectionConfig,
        LeaderElectionLost,
        LeaderElector,
        default_identity,
    )
    from crdkit.runtime.logs import JsonFormatter, configure_logging
    from crdkit.runtime.manager import CacheSyncTimeout, Manager
    from crdkit.runtime.manager_options import (
        LeaderElectionOptions,
        ManagerOptions,
        MetricsOptions,
        ShardingOptions,
        WebhookServerOptions,
    )
    from crdkit.runtime.metrics import RuntimeMetrics, runtime_metrics
    from crdkit.runtime.owners import (
        AlreadyOwnedError,
        controller_of,
        owner_reference,
        set_controller_reference,
        set_owner_reference,
    )
    from crdkit.runtime.predicates import (
        AnnotationsChanged,
        FuncPredicate,
        GenerationChanged,
        LabelsChanged,
        Predicate,
        ResourceVersionChanged,
    )
    from crdkit.runtime.queue import QueueEmpty, QueueShutDown, WorkQueue
    from crdkit.runtime.ratelimit import (
        ItemExponentialRateLimiter,
        MaxOfRateLimiter,
        RateLimiter,
        TokenBucketRateLimiter,
        default_controller_rate_limiter,
    )
    from crdkit.runtime.reconciler import MapFunc, Reconciler
    from crdkit.runtime.result import Request, Result, TerminalError
    from crdkit.runtime.runnable import Runnable
    from crdkit.runtime.status import update_status
    from crdkit.runtime.store import (
        LABEL_INDEX,
        NAMESPACE_INDEX,
        OWNER_INDEX,
        IndexFunc,
        Store,
        index_field,
        index_labels,
        index_namespace,
        index_owner_uid,
    )
    from crdkit.runtime.watch import Watch
    from crdkit.webhook.admission import (
        AdmissionContext,
        Defaulter,
        Denied,
        MatchCondition,
        Validator,
        Webhook,
    )
    from crdkit.webhook.conversion import Conversion

# Lazy (PEP 562, see crdkit._lazy): importing one name loads only its module and what it needs.
_HOMES = {
    "crdkit.runtime.errors": ("ControllerError",),
    "crdkit.webhook.admission": (
        "AdmissionContext",
        "Defaulter",
        "Denied",
        "MatchCondition",
        "Validator",
        "Webhook",
    ),
    "crdkit.runtime.cache": ("CacheReader",),
    "crdkit.runtime.conditions": (
        "REASON_PATTERN",
        "Condition",
        "ConditionStatus",
        "find_condition",
        "is_condition_false",
        "is_condition_true",
        "remove_condition",
        "set_condition",
    ),
    "crdkit.runtime.context": ("Context",),
    "crdkit.webhook.conversion": ("Conversion",),
    "crdkit.runtime.controller": ("Controller",),
    "crdkit.runtime.events": (
        "EventRecorder",
        "EventType",
    ),
    "crdkit.runtime.factory": ("SharedInformerFactory",),
    "crdkit.runtime.informer": ("Informer",),
    "crdkit.runtime.leader": (
        "LeaderElectionConfig",
        "LeaderElectionLost",
        "LeaderElector",
        "default_identity",
    ),
    "crdkit.runtime.logs": (
        "JsonFormatter",
        "configure_logging",
    ),
    "crdkit.runtime.manager": (
        "CacheSyncTimeout",
        "Manager",
    ),
    # The options and their groups: the standard library only, so building them loads no
    # HTTP stack (crdkit gen-rbac reads them too).
    "crdkit.runtime.manager_options": (
        "LeaderElectionOptions",
        "ManagerOptions",
        "MetricsOptions",
        "ShardingOptions",
        "WebhookServerOptions",
    ),
    "crdkit.runtime.metrics": (
        "RuntimeMetrics",
        "runtime_metrics",
    ),
    "crdkit.runtime.owners": (
        "AlreadyOwnedError",
        "controller_of",
        "owner_reference",
        "set_controller_reference",
        "set_owner_reference",
    ),
    "crdkit.runtime.predicates": (
        "AnnotationsChanged",
        "FuncPredicate",
        "GenerationChanged",
        "LabelsChanged",
        "Predicate",
        "ResourceVersionChanged",
    ),
    "crdkit.runtime.queue": (
        "QueueEmpty",
        "QueueShutDown",
        "WorkQueue",
    ),
    "crdkit.runtime.ratelimit": (
        "ItemExponentialRateLimiter",
        "MaxOfRateLimiter",
        "RateLimiter",
        "TokenBucketRateLimiter",
        "default_controller_rate_limiter",
    ),
    "crdkit.runtime.reconciler": (
        "MapFunc",
        "Reconciler",
    ),
    "crdkit.runtime.result": (
        "Request",
        "Result",
        "TerminalError",
    ),
    "crdkit.runtime.runnable": ("Runnable",),
    "crdkit.runtime.status": ("update_status",),
    "crdkit.runtime.store": (
        "LABEL_INDEX",
        "NAMESPACE_INDEX",
        "OWNER_INDEX",
        "IndexFunc",
        "Store",
        "index_field",
        "index_labels",
        "index_namespace",
        "index_owner_uid",
    ),
    "crdkit.runtime.watch": ("Watch",),
}
__getattr__, __dir__ = lazy_namespace(__name__, globals(), _HOMES)

__all__ = [
    "LABEL_INDEX",
    "NAMESPACE_INDEX",
    "OWNER_INDEX",
    "REASON_PATTERN",
    "AdmissionContext",
    "AlreadyOwnedError",
    "AnnotationsChanged",
    "CacheReader",
    "CacheSyncTimeout",
    "Condition",
    "ConditionStatus",
    "Context",
    "Controller",
    "ControllerError",
    "Conversion",
    "Defaulter",
    "Denied",
    "EventRecorder",
    "EventType",
    "FuncPredicate",
    "GenerationChanged",
    "IndexFunc",
    "Informer",
    "ItemExponentialRateLimiter",
    "JsonFormatter",
    "LabelsChanged",
    "LeaderElectionConfig",
    "LeaderElectionLost",
    "LeaderElectionOptions",
    "LeaderElector",
    "Manager",
    "ManagerOptions",
    "MapFunc",
    "MatchCondition",
    "MaxOfRateLimiter",
    "MetricsOptions",
    "Predicate",
    "QueueEmpty",
    "QueueShutDown",
    "RateLimiter",
    "Reconciler",
    "Request",
    "ResourceVersionChanged",
    "Result",
    "Runnable",
    "RuntimeMetrics",
    "ShardingOptions",
    "SharedInformerFactory",
    "Store",
    "TerminalError",
    "TokenBucketRateLimiter",
    "Validator",
    "Watch",
    "Webhook",
    "WebhookServerOptions",
    "WorkQueue",
    "configure_logging",
    "controller_of",
    "default_controller_rate_limiter",
    "default_identity",
    "find_condition",
    "index_field",
    "index_labels",
    "index_namespace",
    "index_owner_uid",
    "is_condition_false",
    "is_condition_true",
    "owner_reference",
    "remove_condition",
    "runtime_metrics",
    "set_condition",
    "set_controller_reference",
    "set_owner_reference",
    "update_status",
]
