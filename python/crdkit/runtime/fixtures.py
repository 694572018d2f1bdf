"""The ``operator`` fixture (registered by ``crdkit.runtime.pytest_plugin``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest_asyncio

from crdkit.runtime.operator_runner import OperatorRunner

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from crdkit.client import Client

__all__ = ["operator"]


@pytest_asyncio.fixture
async def operator(crdkit_client: Client) -> AsyncIterator[OperatorRunner]:
    """An :class:`OperatorRunner` on ``crdkit_client``; whatever it runs is stopped after the
    test, and a manager that failed fails the test."""
    runner = OperatorRunner(crdkit_client)
    yield runner
    await runner.stop()
