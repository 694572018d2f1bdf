"""`StatusWriter`: a PodGroup status written against the version it was made from; refused,
made again once from a fresh read; never a loop, never a lost write left unsaid."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from _fake_scheduling import pod_group_kind

import factories
from crdkit.resources import PodGroup
from crdkit.scheduling import ClusterMirror, GroupRef
from crdkit.scheduling.groups.kubernetes import INITIALLY_SCHEDULED
from crdkit.scheduling.pending import PendingGroup
from crdkit.scheduling.reporting import Reporter
from crdkit.scheduling.status_writer import StatusWriter
from crdkit.testing import FakeCluster

if TYPE_CHECKING:
    from crdkit.client import Client

WAITING = ("WaitingForPods", "1 of the 2 pods of the gang exist")


def condition(status: str) -> dict[str, Any]:
    return {
        "type": INITIALLY_SCHEDULED,
        "status": status,
        "reason": "Scheduled" if status == "True" else "Unschedulable",
        "message": "written elsewhere",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }


class CountingClient:
    """The fake cluster's client, counting patches and gets; ``bump`` changes the PodGroup
    after every read, so each write made from a read is made from an old version."""

    def __init__(self, client: Any, *, bump: bool = False) -> None:
        self.client, self.bump = client, bump
        self.patches = self.gets = 0

    async def patch(self, *args: Any, **kwargs: Any) -> Any:
        self.patches += 1
        return await self.client.patch(*args, **kwargs)

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        self.gets += 1
        found = await self.client.get(*args, **kwargs)
        if self.bump:
            await self.client.patch(
                PodGroup, "job", {"metadata": {"labels": {"n": str(self.gets)}}}, namespace="ml"
            )
        return found


async def gang(client: Any) -> PendingGroup:
    cached = await client.create(factories.kubernetes_podgroup("job", 2))
    pod = await client.create(factories.pod("job-0", pod_group=("kubernetes", "job")))
    group = PendingGroup(GroupRef("kubernetes", "ml", "job"), pending=[pod])
    group.podgroup = cached
    return group


async def test_a_fresh_write_lands_in_one_patch() -> None:
    async with FakeCluster(kinds=[pod_group_kind("kubernetes")]).client() as fake:
        group = await gang(fake)
        client = CountingClient(fake)
        reporter = Reporter(ClusterMirror([]), lambda: 0.0, (1.0, 30.0), 10.0)
        await StatusWriter(cast("Client", client), reporter).write(group, WAITING, binding=False)
        stored = await fake.get(PodGroup, "job", namespace="ml")
        assert stored.status is not None
        assert [c.status for c in stored.status.conditions or []] == ["False"]
        assert (client.patches, client.gets) == (1, 0)


async def test_a_write_made_from_an_old_version_is_made_again_from_a_fresh_read() -> None:
    async with FakeCluster(kinds=[pod_group_kind("kubernetes")]).client() as fake:
        group = await gang(fake)
        await fake.patch(
            PodGroup,
            "job",
            {"status": {"conditions": [condition("True")]}},
            namespace="ml",
            subresource="status",
        )
        client = CountingClient(fake)
        reporter = Reporter(ClusterMirror([]), lambda: 0.0, (1.0, 30.0), 10.0)
        await StatusWriter(cast("Client", client), reporter).write(group, WAITING, binding=False)
        stored = await fake.get(PodGroup, "job", namespace="ml")
        assert stored.status is not None
        assert [c.status for c in stored.status.conditions or []] == ["True"]  # kept
        assert (client.patches, client.gets) == (2, 1)


async def test_a_podgroup_that_keeps_changing_is_tried_twice_then_left_to_its_events() -> None:
    async with FakeCluster(kinds=[pod_group_kind("kubernetes")]).client() as fake:
        group = await gang(fake)
        await fake.patch(PodGroup, "job", {"metadata": {"labels": {"n": "0"}}}, namespace="ml")
        client = CountingClient(fake, bump=True)
        reporter = Reporter(ClusterMirror([]), lambda: 0.0, (1.0, 30.0), 10.0)
        await StatusWriter(cast("Client", client), reporter).write(group, WAITING, binding=False)
        assert (client.patches, client.gets) == (2, 1)
        # Left unwritten: the next write is not taken for one already made.
        assert reporter.status_to_write(group, WAITING, False) is not None


async def test_a_podgroup_gone_is_not_written() -> None:
    async with FakeCluster(kinds=[pod_group_kind("kubernetes")]).client() as fake:
        group = await gang(fake)
        await fake.delete(PodGroup, "job", namespace="ml")
        client = CountingClient(fake)
        reporter = Reporter(ClusterMirror([]), lambda: 0.0, (1.0, 30.0), 10.0)
        await StatusWriter(cast("Client", client), reporter).write(group, WAITING, binding=False)
        assert (client.patches, client.gets) == (1, 0)
