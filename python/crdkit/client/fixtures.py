"""The ``crdkit_client`` pytest fixture: a :class:`Client` for the local control plane.

Registered by :mod:`crdkit.testing.pytest_plugin`; it lives here so the client's test support
stays next to the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest_asyncio

from crdkit.client.client import Client

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from crdkit.testing import ControlPlane

__all__ = ["crdkit_client"]


@pytest_asyncio.fixture
async def crdkit_client(control_plane: ControlPlane) -> AsyncIterator[Client]:
    """An open crdkit ``Client`` for the admin user of ``control_plane``, closed afterwards."""
    async with Client.from_control_plane(control_plane) as client:
        yield client
