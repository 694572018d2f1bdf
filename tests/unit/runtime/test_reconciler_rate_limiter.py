"""``Reconciler.rate_limiter()``: a controller's own retry backoff (controller-runtime's
``controller.Options.RateLimiter``), the unchanged default, and the values refused.

The timing tests run the controller on a virtual clock, so the delays between retries are
exact and a backoff of minutes costs no real time."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from crdkit import Context, Manager, Reconciler, Request, Result
from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.runtime.controller import Controller
from crdkit.runtime.ratelimit import (
    ItemExponentialRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    TokenBucketRateLimiter,
    default_controller_rate_limiter,
)
from crdkit.testing.sim.virtual_time import run_on_virtual_clock

REQUEST = Request("ns", "a")


class AlwaysFails(Reconciler[ConfigMap]):
    """Every reconcile raises, so every try is a retry chosen by the rate limiter; the loop
    time of each try is recorded."""

    name = "always-fails"

    def __init__(self) -> None:
        self.tried_at: list[float] = []
        self.tried = asyncio.Condition()

    async def reconcile(self, ctx: Context, obj: ConfigMap) -> Result | None:
        self.tried_at.append(asyncio.get_running_loop().time())
        async with self.tried:
            self.tried.notify_all()
        raise RuntimeError("the dependency is down")


class CappedAt80ms(AlwaysFails):
    def __init__(self) -> None:
        super().__init__()
        self.made: list[ItemExponentialRateLimiter] = []

    def rate_limiter(self) -> RateLimiter[Request]:
        self.made.append(ItemExponentialRateLimiter(0.01, 0.08))
        return self.made[-1]


def manager() -> Manager:
    return Manager(None, registry=CollectorRegistry())  # type: ignore[arg-type]


def controller(reconciler: Reconciler[Any]) -> Controller[Any]:
    """A controller as the manager builds it (no limiter of the manager's), reading one
    ConfigMap from a dict instead of a cache."""
    objects = {REQUEST: ConfigMap(metadata=ObjectMeta(name="a", namespace="ns"))}
    return Controller(
        reconciler,
        client=None,  # type: ignore[arg-type]
        reader=objects.get,
        recorder=None,  # type: ignore[arg-type]
        cache=None,  # type: ignore[arg-type]
        registry=CollectorRegistry(),
    )


def gaps_between_tries(reconciler: AlwaysFails, tries: int) -> list[float]:
    """Virtual seconds between the first ``tries`` reconciles of an object that always fails."""

    async def main() -> list[float]:
        built = controller(reconciler)
        built.start()
        built.queue.add(REQUEST)
        try:
            # A virtual hour: far more than any curve here needs, so a controller that stops
            # retrying fails the test instead of hanging it.
            async with asyncio.timeout(3600), reconciler.tried:
                await reconciler.tried.wait_for(lambda: len(reconciler.tried_at) >= tries)
        finally:
            await built.stop(grace=0)
        times = reconciler.tried_at[:tries]
        return [later - earlier for earlier, later in itertools.pairwise(times)]

    return run_on_virtual_clock(main())


def test_the_reconcilers_own_limiter_is_the_one_its_controller_uses() -> None:
    first, second = CappedAt80ms(), CappedAt80ms()
    built = manager().add(first)
    assert built.queue.rate_limiter is first.made[0]
    # Called once per controller: another controller gets a limiter of its own, so the
    # failure histories of the two never mix.
    assert manager().add(second).queue.rate_limiter is second.made[0]
    assert len(first.made) == len(second.made) == 1
    assert first.made[0] is not second.made[0]


def test_the_own_limiter_bounds_the_delay_between_retries() -> None:
    gaps = gaps_between_tries(CappedAt80ms(), 12)
    assert gaps[:4] == pytest.approx([0.01, 0.02, 0.04, 0.08])
    # However often the object fails, the next try comes within the cap.
    assert gaps[4:] == pytest.approx([0.08] * 7)


def test_without_one_the_default_is_unchanged() -> None:
    limiter = manager().add(AlwaysFails()).queue.rate_limiter
    assert isinstance(limiter, MaxOfRateLimiter)
    per_key, overall = limiter.limiters
    assert isinstance(per_key, ItemExponentialRateLimiter)
    assert (per_key.base_delay, per_key.max_delay) == (0.005, 1000.0)
    assert isinstance(overall, TokenBucketRateLimiter)
    assert (overall.qps, overall.burst) == (10.0, 100)
    # The same curve as client-go's default: 30 failures stay inside the bucket's burst.
    reference = default_controller_rate_limiter()
    assert [limiter.when(REQUEST) for _ in range(30)] == [
        reference.when(REQUEST) for _ in range(30)
    ]


def test_the_default_keeps_doubling() -> None:
    # What made the 5xx-storm test depend on machine speed: with the default, each failure
    # doubles the wait, 5 ms after the first and over 10 s after the twelfth.
    gaps = gaps_between_tries(AlwaysFails(), 14)
    assert gaps == pytest.approx([0.005 * 2**n for n in range(13)])
    assert gaps[-1] > 20


class GivesAFloat(AlwaysFails):
    name = "gives-a-float"

    def rate_limiter(self) -> RateLimiter[Request]:
        return 0.5  # type: ignore[return-value]


class GivesAClass(AlwaysFails):
    name = "gives-a-class"

    def rate_limiter(self) -> RateLimiter[Request]:
        return ItemExponentialRateLimiter  # type: ignore[return-value]


class SharesAnInstance(AlwaysFails):
    name = "shares-an-instance"
    rate_limiter = ItemExponentialRateLimiter(0.01, 1.0)  # type: ignore[assignment]


@pytest.mark.parametrize(
    ("reconciler", "message"),
    [
        (GivesAFloat(), r"GivesAFloat\.rate_limiter\(\) must be a rate limiter instance .*0\.5"),
        (
            GivesAClass(),
            r"GivesAClass\.rate_limiter\(\) must be a rate limiter instance .*"
            r"the class ItemExponentialRateLimiter",
        ),
        (SharesAnInstance(), r"SharesAnInstance\.rate_limiter must be a method"),
    ],
)
def test_a_bad_limiter_is_refused_when_added(reconciler: AlwaysFails, message: str) -> None:
    mgr = manager()
    with pytest.raises(TypeError, match=message):
        mgr.add(reconciler)
    assert mgr.controllers == []


def test_a_bad_limiter_given_to_the_controller_is_refused() -> None:
    with pytest.raises(TypeError, match=r"^rate_limiter must be a rate limiter instance"):
        Controller(
            AlwaysFails(),
            client=None,  # type: ignore[arg-type]
            reader=lambda request: None,
            recorder=None,  # type: ignore[arg-type]
            cache=None,  # type: ignore[arg-type]
            rate_limiter="fast",  # type: ignore[arg-type]
            registry=CollectorRegistry(),
        )
