"""A PodGroup CRD installed after the scheduler started: with `pod_group_discovery`, the
scheduler finds the API served at a later look and schedules its gangs from then on, as
``crdkit scheduler`` without ``--pod-groups`` does."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cluster import all_bound, create_job, pool_with_nodes, running_scheduler

from crdkit.client import Client
from crdkit.testing import ControlPlane, eventually

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

CRDS = Path(__file__).parents[2] / "data" / "crds"
COSCHEDULING_CRD = CRDS / "scheduler-plugins_scheduling.x-k8s.io_podgroups.yaml"
VOLCANO_CRD = CRDS / "volcano_scheduling.volcano.sh_podgroups.yaml"


async def test_a_podgroup_crd_installed_after_start_is_watched_from_then_on() -> None:
    # A plane of its own: the package's shared one has both CRDs from the start.
    async with ControlPlane() as plane, Client.from_control_plane(plane) as client:
        await plane.install_crds([COSCHEDULING_CRD])
        pool, _, name = await pool_with_nodes(client, plane, {"a": 2})
        options = {"pod_groups": ("coscheduling",), "pod_group_discovery": 0.05}
        async with running_scheduler(client, pool, name, **options) as scheduler:
            assert scheduler.pod_groups == ("coscheduling",)
            await plane.install_crds([VOLCANO_CRD])
            await create_job(client, pool, "late", 1, scheduler=name, group="volcano")
            await eventually(lambda: all_bound(client, pool, "late"), what="the Volcano gang bound")
            assert scheduler.pod_groups == ("coscheduling", "volcano")
