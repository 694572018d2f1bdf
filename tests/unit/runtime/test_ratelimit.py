"""Unit tests of the rate limiters: client-go's curves and their argument checks."""

from __future__ import annotations

import pytest

from crdkit.runtime.ratelimit import (
    ItemExponentialRateLimiter,
    MaxOfRateLimiter,
    TokenBucketRateLimiter,
    default_controller_rate_limiter,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_exponential_doubles_per_failure_and_caps() -> None:
    limiter = ItemExponentialRateLimiter(0.005, 0.04)
    delays = [limiter.when("a") for _ in range(6)]
    assert delays == [0.005, 0.01, 0.02, 0.04, 0.04, 0.04]
    assert limiter.num_requeues("a") == 6


def test_exponential_is_per_key_and_forget_resets() -> None:
    limiter = ItemExponentialRateLimiter(1.0, 100.0)
    limiter.when("a")
    limiter.when("a")
    assert limiter.when("b") == 1.0
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 1.0


def test_exponential_survives_huge_failure_counts() -> None:
    limiter = ItemExponentialRateLimiter()
    for _ in range(2000):
        delay = limiter.when("x")
    assert delay == 1000.0


@pytest.mark.parametrize(
    ("base", "cap", "field"),
    [(0, 1, "base_delay"), (1, -1, "max_delay"), (2, 1, "max_delay")],
)
def test_exponential_rejects_bad_arguments(base: float, cap: float, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        ItemExponentialRateLimiter(base, cap)


def test_token_bucket_allows_burst_then_spaces_by_qps() -> None:
    clock = FakeClock()
    limiter = TokenBucketRateLimiter(10.0, 3, clock=clock)
    assert [limiter.when(i) for i in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.when(3) == pytest.approx(0.1)
    assert limiter.when(4) == pytest.approx(0.2)
    clock.now += 0.3  # three tokens' worth of time pays back the two reservations and one more
    assert limiter.when(5) == pytest.approx(0.0, abs=1e-9)
    assert limiter.when(6) == pytest.approx(0.1)


def test_token_bucket_refills_only_up_to_burst() -> None:
    clock = FakeClock()
    limiter = TokenBucketRateLimiter(1.0, 2, clock=clock)
    clock.now += 1000
    assert [limiter.when(i) for i in range(3)] == [0.0, 0.0, pytest.approx(1.0)]
    assert limiter.num_requeues(0) == 0


@pytest.mark.parametrize(("qps", "burst", "field"), [(0, 1, "qps"), (1, 0, "burst")])
def test_token_bucket_rejects_bad_arguments(qps: float, burst: int, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        TokenBucketRateLimiter(qps, burst)


def test_max_of_takes_longest_delay_and_forgets_everywhere() -> None:
    slow = ItemExponentialRateLimiter(1.0, 10.0)
    fast = ItemExponentialRateLimiter(0.1, 10.0)
    limiter = MaxOfRateLimiter(fast, slow)
    assert limiter.when("k") == 1.0
    assert limiter.when("k") == 2.0
    assert limiter.num_requeues("k") == 2
    limiter.forget("k")
    assert slow.num_requeues("k") == fast.num_requeues("k") == 0


def test_max_of_needs_a_limiter() -> None:
    with pytest.raises(ValueError, match="limiters"):
        MaxOfRateLimiter()


def test_default_controller_limiter_matches_client_go() -> None:
    clock = FakeClock()
    limiter = default_controller_rate_limiter(clock=clock)
    assert limiter.when("k") == 0.005
    assert limiter.when("k") == 0.01
    # 98 more keys use up the burst of 100; the 101st add waits for the bucket (1/10 s).
    for i in range(98):
        limiter.when(i)
    assert limiter.when("other") == pytest.approx(0.1)
