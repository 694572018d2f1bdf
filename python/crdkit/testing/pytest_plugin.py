"""pytest plugin (entry point ``pytest11: crdkit``): a real control plane for tests.

Fixtures:
    control_plane    session-scoped :class:`~crdkit.testing.ControlPlane`
    namespace        a fresh namespace per test (its name)
    k8s_api_client   a kubernetes-asyncio ``ApiClient`` configured for the control plane
    crdkit_client    an open :class:`crdkit.client.Client` for the control plane

The fixtures are async and need pytest-asyncio (0.24 or newer). The plugin loads in every
pytest run of an environment where crdkit is installed, so it must not break pytest where
pytest-asyncio is absent: then the fixtures exist but fail with a clear message.
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import NoReturn

import pytest

__all__ = ["control_plane", "crdkit_client", "k8s_api_client", "namespace"]

if find_spec("pytest_asyncio") is not None:
    from crdkit.client.fixtures import crdkit_client
    from crdkit.testing.fixtures import control_plane, k8s_api_client, namespace
else:  # pragma: no cover - exercised only without pytest-asyncio

    def _needs_pytest_asyncio() -> NoReturn:
        pytest.fail("crdkit's control plane fixtures need pytest-asyncio >= 0.24")

    @pytest.fixture(scope="session")
    def control_plane() -> NoReturn:
        _needs_pytest_asyncio()

    @pytest.fixture
    def namespace() -> NoReturn:
        _needs_pytest_asyncio()

    @pytest.fixture
    def k8s_api_client() -> NoReturn:
        _needs_pytest_asyncio()

    @pytest.fixture
    def crdkit_client() -> NoReturn:
        _needs_pytest_asyncio()
