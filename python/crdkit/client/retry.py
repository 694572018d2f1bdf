"""When to send a failed request again, and after how long: pure decisions, no I/O.

The transport asks :class:`RetryPolicy` after every failed attempt and sleeps for what it
answers (or raises when it answers ``None``). Keeping the rules here, away from the HTTP
layer, lets them be tested with a fake random source and no clock at all:

- **throttling** (429, or a 5xx that carries ``Retry-After``): the server said when to come
  back, so the wait is its ``Retry-After`` (1 s when it gave none), capped at
  ``max_retry_wait``. The apiserver refused the request before acting on it, so every method
  is retried, watches included;
- **a connection that failed before the request was sent** (refused, unreachable): any method
  is retried, since the server cannot have acted on it;
- **a connection that broke after the request was sent** (reset, closed, body cut short): the
  server may have acted on it, so only idempotent methods (GET, HEAD, OPTIONS: reads, lists
  and watches) are retried; a write surfaces the error and its caller decides (a reconciler is
  requeued and re-reads the world);
- timeouts are never retried here: a request's timeout is its caller's budget.

Connection retries wait an exponential backoff with jitter (``backoff_initial`` doubling up to
``backoff_max``, times a random factor in [1, 2)), so clients that lost one apiserver together
do not come back in lockstep. All retries of one request together are bounded by
``max_retries``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = [
    "IDEMPOTENT_METHODS",
    "Backoff",
    "ConnectionFailure",
    "RetryPolicy",
    "retry_after_seconds",
]

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_RETRY_AFTER = 1.0


class ConnectionFailure(Enum):
    """How far a request got before its connection failed."""

    NOT_SENT = "not sent"
    """No connection was made (refused, unreachable): the server never saw the request."""
    BROKEN = "broken"
    """The connection broke after the request was written (reset, closed, cut short)."""


def retry_after_seconds(
    headers: Mapping[str, str], default: float, *, now: datetime | None = None
) -> float:
    """The ``Retry-After`` delay in seconds: delta-seconds (what the apiserver sends) or an
    HTTP date. ``default`` when the header is absent or unreadable."""
    value = headers.get("Retry-After")
    if value is None:
        return default
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return default
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class Backoff:
    """Exponential backoff with jitter: ``initial`` doubling up to ``maximum``.

    Each delay is the current step times a random factor in [1, 2), capped at ``maximum``, so
    many clients reconnecting after one apiserver restart do not arrive in lockstep.
    ``random`` is injectable so tests can pin the jitter.
    """

    def __init__(
        self,
        initial: float = 0.8,
        maximum: float = 30.0,
        *,
        random: Callable[[], float] = random.random,
    ) -> None:
        if initial <= 0 or maximum < initial:
            raise ValueError(f"backoff needs 0 < initial <= maximum, got {initial}, {maximum}")
        self.initial = initial
        self.maximum = maximum
        self._random = random
        self._step = initial

    def next(self) -> float:
        delay = min(self.maximum, self._step * (1.0 + self._random()))
        self._step = min(self.maximum, self._step * 2)
        return delay

    def reset(self) -> None:
        self._step = self.initial


@dataclass(frozen=True)
class RetryPolicy:
    """Which failed attempts of one request are sent again, and after how long.

    Defaults: at most 5 retries per request; a ``Retry-After`` is honoured up to 30 s per wait;
    connection failures back off from 0.2 s, doubling, up to 5 s (with jitter).
    """

    max_retries: int = 5
    max_retry_wait: float = 30.0
    backoff_initial: float = 0.2
    backoff_max: float = 5.0
    random: Callable[[], float] = field(default=random.random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        if self.max_retry_wait < 0:
            raise ValueError(f"max_retry_wait must be >= 0, got {self.max_retry_wait}")
        if not 0 < self.backoff_initial <= self.backoff_max:
            raise ValueError(
                "backoff needs 0 < backoff_initial <= backoff_max, got "
                f"{self.backoff_initial}, {self.backoff_max}"
            )

    def after_status(self, status: int, headers: Mapping[str, str], retries: int) -> float | None:
        """The wait before retrying an answer with HTTP ``status``; ``None``: do not retry.

        ``retries`` is how many times this request was already retried.
        """
        if retries >= self.max_retries:
            return None
        throttled = status == 429 or (500 <= status < 600 and "Retry-After" in headers)
        if not throttled:
            return None
        return min(retry_after_seconds(headers, DEFAULT_RETRY_AFTER), self.max_retry_wait)

    def after_connection_failure(
        self, method: str, failure: ConnectionFailure, retries: int
    ) -> float | None:
        """The wait before retrying a request whose connection failed; ``None``: do not retry."""
        if retries >= self.max_retries:
            return None
        if failure is ConnectionFailure.BROKEN and method.upper() not in IDEMPOTENT_METHODS:
            return None
        step = min(self.backoff_max, self.backoff_initial * 2.0**retries)
        return min(self.backoff_max, step * (1.0 + self.random()))
