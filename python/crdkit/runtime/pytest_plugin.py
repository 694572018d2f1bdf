"""pytest plugin (entry point ``pytest11: crdkit-runtime``): the ``operator`` fixture, which runs
reconcilers in a Manager against the control plane of ``crdkit.testing``'s plugin.

It is a plugin of its own because ``crdkit.testing`` stays below the runtime (it uses only the
client); without pytest-asyncio the fixture exists but fails with a clear message.
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import NoReturn

import pytest

__all__ = ["operator"]

if find_spec("pytest_asyncio") is not None:
    from crdkit.runtime.fixtures import operator
else:  # pragma: no cover - exercised only without pytest-asyncio

    @pytest.fixture
    def operator() -> NoReturn:
        pytest.fail("crdkit's operator fixture needs pytest-asyncio >= 0.24")
