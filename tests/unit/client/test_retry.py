"""Retry decisions and backoff: pure functions of their inputs (the jitter source is pinned)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from crdkit.client.retry import (
    Backoff,
    ConnectionFailure,
    RetryPolicy,
    retry_after_seconds,
)

NOW = datetime(2015, 10, 21, 7, 28, 0, tzinfo=UTC)


def test_retry_after_seconds_and_dates() -> None:
    assert retry_after_seconds({"Retry-After": "5"}, 1.0) == 5.0
    assert retry_after_seconds({"Retry-After": "0.5"}, 1.0) == 0.5
    assert retry_after_seconds({}, 1.0) == 1.0
    assert retry_after_seconds({"Retry-After": "-5"}, 1.0) == 0.0
    assert retry_after_seconds({"Retry-After": "soon"}, 1.0) == 1.0
    # An HTTP date counts from now; one in the past means "now".
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2015 07:28:07 GMT"}, 1, now=NOW) == 7
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2015 07:27:00 GMT"}, 1, now=NOW) == 0


def test_throttling_waits_what_the_server_said_for_any_method() -> None:
    policy = RetryPolicy()
    for method_status in (429, 503, 500, 504):
        assert policy.after_status(method_status, {"Retry-After": "5"}, 0) == 5.0
    assert policy.after_status(429, {}, 0) == 1.0  # throttled without a delay: one second


def test_errors_without_retry_after_are_not_retried() -> None:
    policy = RetryPolicy()
    for status in (500, 503, 400, 404, 409, 410, 422):
        assert policy.after_status(status, {}, 0) is None
    assert policy.after_status(409, {"Retry-After": "1"}, 0) is None  # not a server failure


def test_retry_after_is_capped_and_retries_are_bounded() -> None:
    policy = RetryPolicy(max_retries=2, max_retry_wait=30.0)
    assert policy.after_status(429, {"Retry-After": "3600"}, 0) == 30.0
    assert policy.after_status(429, {"Retry-After": "1"}, 1) == 1.0
    assert policy.after_status(429, {"Retry-After": "1"}, 2) is None
    assert policy.after_connection_failure("GET", ConnectionFailure.BROKEN, 2) is None


def test_broken_connections_retry_reads_only() -> None:
    policy = RetryPolicy(random=lambda: 0.0)
    for method in ("GET", "get", "HEAD", "OPTIONS"):
        assert policy.after_connection_failure(method, ConnectionFailure.BROKEN, 0) == 0.2
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        # The server may have acted on it: its caller decides.
        assert policy.after_connection_failure(method, ConnectionFailure.BROKEN, 0) is None


def test_connections_never_made_retry_any_method() -> None:
    policy = RetryPolicy(random=lambda: 0.0)
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        assert policy.after_connection_failure(method, ConnectionFailure.NOT_SENT, 0) == 0.2


def test_connection_backoff_doubles_with_jitter_up_to_its_cap() -> None:
    low = RetryPolicy(max_retries=10, random=lambda: 0.0)
    high = RetryPolicy(max_retries=10, random=lambda: 0.999)
    delays = [low.after_connection_failure("GET", ConnectionFailure.BROKEN, n) for n in range(6)]
    assert delays == [0.2, 0.4, 0.8, 1.6, 3.2, 5.0]
    top = high.after_connection_failure("GET", ConnectionFailure.BROKEN, 0)
    assert top is not None
    assert 0.39 < top < 0.4  # [1, 2) times the step
    assert high.after_connection_failure("GET", ConnectionFailure.BROKEN, 5) == 5.0


def test_policy_validation() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        RetryPolicy(max_retries=-1)
    with pytest.raises(ValueError, match="backoff"):
        RetryPolicy(backoff_initial=2.0, backoff_max=1.0)
    assert RetryPolicy(max_retries=0).after_status(429, {}, 0) is None


def test_backoff_doubles_caps_and_resets() -> None:
    jitter = iter([0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    backoff = Backoff(0.8, 5.0, random=lambda: next(jitter))
    assert [backoff.next() for _ in range(5)] == pytest.approx([0.8, 2.4, 3.2, 5.0, 5.0])
    backoff.reset()
    assert backoff.next() == 0.8
    with pytest.raises(ValueError, match="initial"):
        Backoff(0, 1)
    with pytest.raises(ValueError, match="initial"):
        Backoff(2, 1)
