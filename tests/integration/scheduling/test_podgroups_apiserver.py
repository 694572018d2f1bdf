"""crdkit.scheduling.groups on the real apiserver, with the upstream PodGroup CRDs installed:
objects built from the models are accepted, read back typed, and their status written.

A control plane of its own: these CRDs must not replace, on the shared one, CRDs other tests
install under the same names (the gang scheduler example's Volcano kinds).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import pytest_asyncio

from crdkit.client import Client
from crdkit.client.errors import NotFound
from crdkit.resources import ObjectMeta
from crdkit.scheduling.groups.coscheduling import (
    CoschedulingPodGroup,
    CoschedulingPodGroupSpec,
    CoschedulingPodGroupStatus,
)
from crdkit.scheduling.groups.volcano import (
    VolcanoNetworkTopology,
    VolcanoPodGroup,
    VolcanoPodGroupCondition,
    VolcanoPodGroupSpec,
    VolcanoPodGroupStatus,
    VolcanoSubGroupPolicy,
)
from crdkit.testing import ControlPlane

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]

CRDS = Path(__file__).parents[2] / "data" / "crds"
UPSTREAM = [
    CRDS / "scheduler-plugins_scheduling.x-k8s.io_podgroups.yaml",
    CRDS / "volcano_scheduling.volcano.sh_podgroups.yaml",
]
NAMESPACE = "gangs"
WHEN = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(scheduling_plane: ControlPlane) -> AsyncIterator[Client]:
    # The folder's control plane has both upstream CRDs installed (see conftest.py).
    await scheduling_plane.create_namespace(NAMESPACE)
    async with Client.from_control_plane(scheduling_plane) as api:
        yield api


async def test_a_coscheduling_pod_group(client: Client) -> None:
    group = CoschedulingPodGroup(
        metadata=ObjectMeta(name="nginx", namespace=NAMESPACE),
        spec=CoschedulingPodGroupSpec(
            min_member=3,
            min_resources={"cpu": "3", "memory": "1Gi", "nvidia.com/gpu": "8"},
            schedule_timeout_seconds=10,
        ),
    )
    created = await client.create(group)
    assert created.spec == group.spec
    assert created.status is None or created.status.phase is None

    read = await client.get(CoschedulingPodGroup, "nginx", namespace=NAMESPACE)
    assert isinstance(read, CoschedulingPodGroup)
    assert read.spec.min_resources == {"cpu": "3", "memory": "1Gi", "nvidia.com/gpu": "8"}

    read.status = CoschedulingPodGroupStatus(
        phase="Scheduling", occupied_by="uid-1", running=1, schedule_start_time=WHEN
    )
    read.spec.min_member = 99  # ignored: the status subresource writes status only
    written = await client.replace_status(read)
    assert written.status is not None
    assert written.status.phase == "Scheduling"
    assert written.status.schedule_start_time == WHEN

    again = await client.get(CoschedulingPodGroup, "nginx", namespace=NAMESPACE)
    assert again.spec.min_member == 3
    assert again.status == CoschedulingPodGroupStatus(
        phase="Scheduling", occupied_by="uid-1", running=1, schedule_start_time=WHEN
    )


async def test_a_volcano_pod_group(client: Client) -> None:
    group = VolcanoPodGroup(
        metadata=ObjectMeta(name="job-1", namespace=NAMESPACE),
        spec=VolcanoPodGroupSpec(
            min_member=4,
            min_task_member={"worker": 4},
            queue="default",
            priority_class_name="high",
            min_resources={"cpu": "32", "nvidia.com/gpu": "32"},
            network_topology=VolcanoNetworkTopology(mode="hard", highest_tier_allowed=2),
            sub_group_policy=[
                VolcanoSubGroupPolicy(
                    name="worker",
                    sub_group_size=2,
                    label_selector={"matchLabels": {"volcano.sh/task-spec": "worker"}},
                    match_label_keys=["volcano.sh/partition-id"],
                    network_topology=VolcanoNetworkTopology(mode="hard", highest_tier_allowed=1),
                )
            ],
        ),
    )
    created = await client.create(group)
    policies = created.spec.sub_group_policy
    assert policies is not None
    # The CRD defaults minSubGroups; everything sent comes back as sent.
    assert policies[0].min_sub_groups == 0
    assert created.spec.model_copy(update={"sub_group_policy": None}) == group.spec.model_copy(
        update={"sub_group_policy": None}
    )
    assert (
        policies[0].model_copy(update={"min_sub_groups": None})
        == (group.spec.sub_group_policy or [])[0]
    )

    read = await client.get(VolcanoPodGroup, "job-1", namespace=NAMESPACE)
    assert isinstance(read, VolcanoPodGroup)
    topology = read.spec.network_topology
    assert topology is not None
    assert (topology.mode, topology.highest_tier_allowed) == ("hard", 2)

    # Volcano's CRD declares no status subresource: status goes with the object.
    with pytest.raises(NotFound):
        await client.replace_status(read)
    status = VolcanoPodGroupStatus(
        phase="Pending",
        conditions=[
            VolcanoPodGroupCondition(
                type="Unschedulable",
                status="True",
                transition_id="t-1",
                last_transition_time=WHEN,
                reason="NotEnoughResources",
                message="4/4 tasks in gang unschedulable",
            )
        ],
        running=0,
    )
    read.status = status
    await client.replace(read)
    again = await client.get(VolcanoPodGroup, "job-1", namespace=NAMESPACE)
    assert again.status == status
