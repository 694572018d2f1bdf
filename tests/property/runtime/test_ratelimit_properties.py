"""Property tests of the rate limiters: backoff grows per failure, is capped, and resets."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crdkit.runtime.ratelimit import (
    ItemExponentialRateLimiter,
    TokenBucketRateLimiter,
    default_controller_rate_limiter,
)

OPS = st.lists(st.tuples(st.sampled_from(["fail", "forget"]), st.sampled_from("xyz")), max_size=80)


@given(
    ops=OPS,
    base=st.floats(1e-4, 1.0),
    factor=st.floats(1.0, 1e6),
)
def test_exponential_backoff_grows_caps_and_resets(
    ops: list[tuple[str, str]], base: float, factor: float
) -> None:
    cap = base * factor
    limiter = ItemExponentialRateLimiter(base, cap)
    failures: dict[str, int] = {}
    last: dict[str, float] = {}
    for op, key in ops:
        if op == "forget":
            limiter.forget(key)
            failures.pop(key, None)
            last.pop(key, None)
            continue
        delay = limiter.when(key)
        n = failures.get(key, 0)
        assert delay == pytest.approx(min(base * 2.0**n, cap))
        assert base <= delay <= cap
        assert delay >= last.get(key, 0.0), "backoff must not shrink before a forget"
        if n and last[key] < cap:
            assert delay > last[key], "backoff must grow until the cap"
        failures[key] = n + 1
        last[key] = delay
        assert limiter.num_requeues(key) == failures[key]


@given(
    gaps=st.lists(st.floats(0, 0.5), max_size=60),
    qps=st.floats(1, 100),
    burst=st.integers(1, 20),
)
def test_token_bucket_never_exceeds_its_rate(gaps: list[float], qps: float, burst: int) -> None:
    now = [0.0]
    limiter = TokenBucketRateLimiter(qps, burst, clock=lambda: now[0])
    release_times = []
    for gap in gaps:
        now[0] += gap
        release_times.append(now[0] + limiter.when("k"))
    # Over any window, at most burst + rate * window releases can happen.
    release_times.sort()
    for i in range(len(release_times)):
        for j in range(i, len(release_times)):
            window = release_times[j] - release_times[i]
            assert j - i + 1 <= burst + qps * window + 1e-6


@given(failures=st.integers(1, 40))
def test_default_limiter_delay_is_at_least_the_per_key_backoff(failures: int) -> None:
    limiter = default_controller_rate_limiter(clock=lambda: 0.0)
    delays = [limiter.when("k") for _ in range(failures)]
    assert delays[-1] >= min(0.005 * 2 ** (failures - 1), 1000.0)
    limiter.forget("k")
    assert limiter.num_requeues("k") == 0
