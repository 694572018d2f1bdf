"""Fixtures of the example operators' integration tests."""

from __future__ import annotations

import pytest_asyncio
from examples.gang_scheduler.cluster_setup import JOB_CRD_PATH, install_job_crd

from crdkit.client import Client
from crdkit.testing import ControlPlane


@pytest_asyncio.fixture
async def volcano_job_crd(control_plane: ControlPlane) -> str:
    """The Job CRD installed (once; later calls find it) and served; yields its file path."""
    async with Client.from_control_plane(control_plane) as client:
        await install_job_crd(client)
    return str(JOB_CRD_PATH)
