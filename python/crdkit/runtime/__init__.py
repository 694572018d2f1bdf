"""The controller runtime: work queue, rate limiters, metrics (informers, reconcilers, manager).

Modelled on client-go and controller-runtime, in asyncio. The names operator authors use are
re-exported from :mod:`crdkit`.
"""

from __future__ import annotations

from crdkit.runtime.queue import QueueEmpty, QueueShutDown, WorkQueue
from crdkit.runtime.ratelimit import (
    ItemExponentialRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    TokenBucketRateLimiter,
    default_controller_rate_limiter,
)

__all__ = [
    "ItemExponentialRateLimiter",
    "MaxOfRateLimiter",
    "QueueEmpty",
    "QueueShutDown",
    "RateLimiter",
    "TokenBucketRateLimiter",
    "WorkQueue",
    "default_controller_rate_limiter",
]
