"""A control plane of its own for the scheduling tests, with both upstream PodGroup CRDs.

Third-party CRDs must not land on the session's shared control plane, and the scheduler sees
every Node of its apiserver; each test still keeps to its own nodes by a pool label, so the
tests of this folder can share this plane.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest_asyncio

from crdkit.testing import ControlPlane

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

CRDS = Path(__file__).parents[2] / "data" / "crds"
PODGROUP_CRDS = [
    CRDS / "scheduler-plugins_scheduling.x-k8s.io_podgroups.yaml",
    CRDS / "volcano_scheduling.volcano.sh_podgroups.yaml",
]


@pytest_asyncio.fixture(scope="package", loop_scope="session")
async def scheduling_plane() -> AsyncIterator[ControlPlane]:
    async with ControlPlane() as plane:
        await plane.install_crds(PODGROUP_CRDS)
        yield plane
