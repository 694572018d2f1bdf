"""Shared test settings: hypothesis profiles chosen by HYPOTHESIS_PROFILE (``dev`` or ``ci``),
and garbage collected in the test that made it."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(autouse=True)
def _collect_garbage_in_the_test_that_made_it() -> Iterator[None]:
    """Collect cyclic garbage as each test ends, after its event loop closed.

    A socket or transport a test leaks is often only freed by the garbage collector, and its
    ``ResourceWarning`` (an error here: ``filterwarnings = ["error"]``) is raised wherever the
    collector happens to run: in some later test, or never. Collecting at teardown makes the
    leak fail the test that leaked it, every time.
    """
    yield
    gc.collect()
    # What survives is reachable: freeze it, so the next test's collection walks only the
    # objects made since (a full collection of the whole heap costs about 0.2 s a test).
    gc.freeze()
