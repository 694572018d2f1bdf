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

# Lazy (PEP 562, see crdkit._lazy): importing one name loads only its module and what it needs.
if TYPE_CHECKING:
    from crdkit.runtime.cache import CacheReader as CacheReader
    from crdkit.runtime.conditions import REASON_PATTERN as REASON_PATTERN
    from crdkit.runtime.conditions import Condition as Condition
    from crdkit.runtime.conditions import ConditionStatus as ConditionStatus
    from crdkit.runtime.conditions import find_condition as find_condition
    from crdkit.runtime.conditions import is_condition_false as is_condition_false
    from crdkit.runtime.conditions import is_condition_true as is_condition_true
    from crdkit.runtime.conditions import remove_condition as remove_condition
    from crdkit.runtime.conditions import set_condition as set_condition
    from crdkit.runtime.context import Context as Context
    from crdkit.runtime.controller import Controller as Controller
    from crdkit.runtime.errors import ControllerError as ControllerError
    from crdkit.runtime.events import EventRecorder as EventRecorder
    from crdkit.runtime.events import EventType as EventType
    from crdkit.runtime.factory import SharedInformerFactory as SharedInformerFactory
    from crdkit.runtime.informer import Informer as Informer
    from crdkit.runtime.leader import LeaderElectionConfig as LeaderElectionConfig
    from crdkit.runtime.leader import LeaderElectionLost as LeaderElectionLost
    from crdkit.runtime.leader import LeaderElector as LeaderElector
    from crdkit.runtime.leader import default_identity as default_identity
    from crdkit.runtime.logs import JsonFormatter as JsonFormatter
    from crdkit.runtime.logs import configure_logging as configure_logging
    from crdkit.runtime.manager import CacheSyncTimeout as CacheSyncTimeout
    from crdkit.runtime.manager import Manager as Manager

    # The options and their groups: the standard library only, so building them loads no
    # HTTP stack (crdkit gen-rbac reads them too).
    from crdkit.runtime.manager_options import LeaderElectionOptions as LeaderElectionOptions
    from crdkit.runtime.manager_options import ManagerOptions as ManagerOptions
    from crdkit.runtime.manager_options import MetricsOptions as MetricsOptions
    from crdkit.runtime.manager_options import ShardingOptions as ShardingOptions
    from crdkit.runtime.manager_options import WebhookServerOptions as WebhookServerOptions
    from crdkit.runtime.metrics import RuntimeMetrics as RuntimeMetrics
    from crdkit.runtime.metrics import runtime_metrics as runtime_metrics
    from crdkit.runtime.owners import AlreadyOwnedError as AlreadyOwnedError
    from crdkit.runtime.owners import controller_of as controller_of
    from crdkit.runtime.owners import owner_reference as owner_reference
    from crdkit.runtime.owners import set_controller_reference as set_controller_reference
    from crdkit.runtime.owners import set_owner_reference as set_owner_reference
    from crdkit.runtime.predicates import AnnotationsChanged as AnnotationsChanged
    from crdkit.runtime.predicates import FuncPredicate as FuncPredicate
    from crdkit.runtime.predicates import GenerationChanged as GenerationChanged
    from crdkit.runtime.predicates import LabelsChanged as LabelsChanged
    from crdkit.runtime.predicates import Predicate as Predicate
    from crdkit.runtime.predicates import ResourceVersionChanged as ResourceVersionChanged
    from crdkit.runtime.queue import QueueEmpty as QueueEmpty
    from crdkit.runtime.queue import QueueShutDown as QueueShutDown
    from crdkit.runtime.queue import WorkQueue as WorkQueue
    from crdkit.runtime.ratelimit import ItemExponentialRateLimiter as ItemExponentialRateLimiter
    from crdkit.runtime.ratelimit import MaxOfRateLimiter as MaxOfRateLimiter
    from crdkit.runtime.ratelimit import RateLimiter as RateLimiter
    from crdkit.runtime.ratelimit import TokenBucketRateLimiter as TokenBucketRateLimiter
    from crdkit.runtime.ratelimit import (
        default_controller_rate_limiter as default_controller_rate_limiter,
    )
    from crdkit.runtime.reconciler import MapFunc as MapFunc
    from crdkit.runtime.reconciler import Reconciler as Reconciler
    from crdkit.runtime.result import Request as Request
    from crdkit.runtime.result import Result as Result
    from crdkit.runtime.result import TerminalError as TerminalError
    from crdkit.runtime.runnable import Runnable as Runnable
    from crdkit.runtime.status import update_status as update_status
    from crdkit.runtime.store import LABEL_INDEX as LABEL_INDEX
    from crdkit.runtime.store import NAMESPACE_INDEX as NAMESPACE_INDEX
    from crdkit.runtime.store import OWNER_INDEX as OWNER_INDEX
    from crdkit.runtime.store import IndexFunc as IndexFunc
    from crdkit.runtime.store import Store as Store
    from crdkit.runtime.store import index_field as index_field
    from crdkit.runtime.store import index_labels as index_labels
    from crdkit.runtime.store import index_namespace as index_namespace
    from crdkit.runtime.store import index_owner_uid as index_owner_uid
    from crdkit.runtime.watch import Watch as Watch
    from crdkit.webhook.admission import AdmissionContext as AdmissionContext
    from crdkit.webhook.admission import Defaulter as Defaulter
    from crdkit.webhook.admission import Denied as Denied
    from crdkit.webhook.admission import MatchCondition as MatchCondition
    from crdkit.webhook.admission import Validator as Validator
    from crdkit.webhook.admission import Webhook as Webhook
    from crdkit.webhook.conversion import Conversion as Conversion

__getattr__, __dir__ = lazy_namespace(__name__, globals())
