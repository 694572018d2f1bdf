"""Fixtures of the example operators' integration tests."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest_asyncio
from examples.gang_scheduler.cluster_setup import JOB_CRD_PATH, install_crds, install_job_crd

from crdkit.client import Client
from crdkit.testing import ControlPlane


@pytest_asyncio.fixture
async def volcano_job_crd(control_plane: ControlPlane) -> str:
    """The Job CRD installed (once; later calls find it) and served; yields its file path."""
    async with Client.from_control_plane(control_plane) as client:
        await install_job_crd(client)
    return str(JOB_CRD_PATH)


@pytest_asyncio.fixture(scope="package", loop_scope="session")
async def gang_plane() -> AsyncIterator[ControlPlane]:
    """A control plane of its own for the gang-scheduler operator, with the Job and Volcano's
    PodGroup CRDs: third-party CRDs stay off the session's shared plane (and its gang
    scheduler watches every PodGroup there). Each test keeps to its own nodes and namespace."""
    async with ControlPlane() as plane:
        async with Client.from_control_plane(plane) as client:
            await install_crds(client)
        yield plane


@pytest_asyncio.fixture
async def gang_namespace(gang_plane: ControlPlane) -> str:
    """A fresh namespace on the gang plane."""
    name = f"g{uuid.uuid4().hex[:8]}"
    await gang_plane.create_namespace(name)
    return name
