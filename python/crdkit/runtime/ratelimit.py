"""Rate limiters that decide how long a failed key waits before it is retried.

They follow client-go's ``workqueue`` rate limiters, because operators written against
controller-runtime are tuned for exactly these curves:

- :class:`ItemExponentialRateLimiter` doubles a key's delay on every failure (5 ms .. 1000 s), so a
  broken object backs off without slowing the others;
- :class:`TokenBucketRateLimiter` caps the overall retry rate (10 per second, bursts of 100), so a
  mass failure cannot hammer the apiserver;
- :class:`MaxOfRateLimiter` takes the longest delay of several limiters;
- :func:`default_controller_rate_limiter` is the max of the first two, client-go's controller
  default.

``when(key)`` records a failure and returns the delay in seconds; ``forget(key)`` clears the
key's history after a success; ``num_requeues(key)`` is how many failures are on record.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable
from typing import Any, Protocol, TypeVar, cast

__all__ = [
    "Clock",
    "ItemExponentialRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "TokenBucketRateLimiter",
    "default_controller_rate_limiter",
    "require_rate_limiter",
]

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", bound=Hashable, contravariant=True)

Clock = Callable[[], float]
"""A monotonic clock in seconds; injectable so tests need not sleep."""


class RateLimiter(Protocol[K_contra]):
    """What the work queue needs from a rate limiter."""

    def when(self, key: K_contra) -> float:
        """Record one more failure of ``key`` and return how many seconds it should wait."""
        ...

    def forget(self, key: K_contra) -> None:
        """Drop ``key``'s failure history (it succeeded, or it is gone)."""
        ...

    def num_requeues(self, key: K_contra) -> int:
        """How many failures of ``key`` are on record."""
        ...


_METHODS = ("when", "forget", "num_requeues")


def require_rate_limiter(value: object, field: str) -> RateLimiter[Any]:
    """``value`` if it is a rate limiter instance, else a ``TypeError`` naming ``field``.

    Checked when a controller is built, so that a wrong value fails ``Manager.add`` rather than
    the first failed reconcile, long after start-up. A class is refused as well as a value
    without the methods: its ``when`` would be an unbound function, which fails only when
    called.
    """
    missing = [name for name in _METHODS if not callable(getattr(value, name, None))]
    if isinstance(value, type) or missing:
        if isinstance(value, type):
            what = f"the class {value.__qualname__}"
        else:
            what = f"{value!r}, which has no {', '.join(missing)}"
        raise TypeError(
            f"{field} must be a rate limiter instance (with when, forget and num_requeues, "
            f"such as ItemExponentialRateLimiter(0.005, 30.0)), got {what}"
        )
    return cast("RateLimiter[Any]", value)


def _require_positive(name: str, value: float) -> None:
    if not value > 0:
        raise ValueError(f"{name} must be positive, got {value!r}")


class ItemExponentialRateLimiter:
    """Per-key exponential backoff: ``base_delay * 2**failures``, capped at ``max_delay``."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        _require_positive("base_delay", base_delay)
        _require_positive("max_delay", max_delay)
        if max_delay < base_delay:
            raise ValueError(
                f"max_delay ({max_delay!r}) must not be less than base_delay ({base_delay!r})"
            )
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._failures: dict[Hashable, int] = {}

    def when(self, key: Hashable) -> float:
        exponent = self._failures.get(key, 0)
        self._failures[key] = exponent + 1
        # Past ~2**64 the float would overflow; the cap is reached long before that matters.
        if exponent > 62:
            return self.max_delay
        return min(math.ldexp(self.base_delay, exponent), self.max_delay)

    def forget(self, key: Hashable) -> None:
        self._failures.pop(key, None)

    def num_requeues(self, key: Hashable) -> int:
        return self._failures.get(key, 0)


class TokenBucketRateLimiter:
    """An overall limit on retries: ``qps`` tokens a second, at most ``burst`` saved up.

    Every ``when`` takes one token; when none is left the caller waits for a future token (a
    reservation, as golang.org/x/time/rate does), so delays grow by ``1/qps`` per extra caller.
    It keeps no per-key state, so ``forget`` does nothing and ``num_requeues`` is always 0.
    """

    def __init__(self, qps: float = 10.0, burst: int = 100, *, clock: Clock = time.monotonic):
        _require_positive("qps", qps)
        if burst < 1:
            raise ValueError(f"burst must be at least 1, got {burst!r}")
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()

    def when(self, key: Hashable) -> float:
        now = self._clock()
        elapsed = max(0.0, now - self._last)
        self._last = now
        self._tokens = min(float(self.burst), self._tokens + elapsed * self.qps)
        self._tokens -= 1.0
        if self._tokens >= 0:
            return 0.0
        return -self._tokens / self.qps

    def forget(self, key: Hashable) -> None:
        return None

    def num_requeues(self, key: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay (and the highest requeue count) of several limiters."""

    def __init__(self, *limiters: RateLimiter[Hashable]) -> None:
        if not limiters:
            raise ValueError("limiters must name at least one rate limiter")
        self.limiters = limiters

    def when(self, key: Hashable) -> float:
        # Every limiter must see the failure, so no short-circuiting here.
        return max([limiter.when(key) for limiter in self.limiters])

    def forget(self, key: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(key)

    def num_requeues(self, key: Hashable) -> int:
        return max(limiter.num_requeues(key) for limiter in self.limiters)


def default_controller_rate_limiter(*, clock: Clock = time.monotonic) -> MaxOfRateLimiter:
    """client-go's ``DefaultControllerRateLimiter``: per key 5 ms .. 1000 s, overall 10 qps, 100."""
    return MaxOfRateLimiter(
        ItemExponentialRateLimiter(0.005, 1000.0),
        TokenBucketRateLimiter(10.0, 100, clock=clock),
    )
