"""Fixtures for the CRD integration tests: the corpus installed once, and a blocking API
client usable inside hypothesis tests (which cannot be coroutines)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from crd_api import BlockingApi
from crd_corpus import CORPUS

from crdkit.crd import build_crds
from crdkit.testing import ControlPlane


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def corpus_installed(control_plane: ControlPlane) -> AsyncIterator[list[dict[str, Any]]]:
    """Every corpus CRD, installed and served."""
    yield await control_plane.install_crds(build_crds(CORPUS))


@pytest.fixture(scope="session")
def api(control_plane: ControlPlane, corpus_installed: list[dict[str, Any]]) -> BlockingApi:
    return BlockingApi(control_plane)
