"""``GangScheduler`` with queues on the fake cluster: borrowing what a cohort leaves idle,
the reason a gang waits for quota, reclaim of lent quota (whole borrower gangs, the least loss
first, the owner's gang bound), the default queue, a missing queue, and preemption kept inside
a queue."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from _fake_scheduling import NAMESPACE, SCHEDULER, add_node, exists, scheduling

from crdkit.client import Client, NotFound
from crdkit.resources import Event, Pod
from crdkit.resources.queues import Queue
from crdkit.scheduling.queues.gate import QUEUE_LABEL
from crdkit.testing import eventually
from factories import coscheduling_podgroup, pod, volcano_podgroup

GPU = "nvidia.com/gpu"


def queue(name: str, parent: str | None = None, gpus: int = 0, **quota: Any) -> Queue:
    return Queue.model_validate(
        {
            "metadata": {"name": name},
            "spec": {
                **({"parent": parent} if parent else {}),
                "flavors": [
                    {"name": "any", "resources": [{"name": GPU, "nominal": gpus, **quota}]}
                ],
                **({"preemption": {"withinQueue": "Never"}} if name.endswith("-never") else {}),
            },
        }
    )


async def nodes(client: Client, count: int) -> None:
    for index in range(count):
        await add_node(client, f"n{index}")


async def gang(
    client: Client, name: str, pods: int, queue_name: str | None, priority: int = 0
) -> list[str]:
    labels = {QUEUE_LABEL: queue_name} if queue_name else {}
    await client.create(coscheduling_podgroup(name, pods))
    names = [f"{name}-{i}" for i in range(pods)]
    for pod_name in names:
        await client.create(
            pod(
                pod_name,
                gpus=8,
                scheduler=SCHEDULER,
                priority=priority,
                labels=labels,
                pod_group=("coscheduling", name),
            )
        )
    return names


async def bound(client: Client, names: list[str]) -> bool:
    try:
        pods = [await client.get(Pod, n, namespace=NAMESPACE) for n in names]
    except NotFound:
        return False
    return all(p.spec.node_name for p in pods)


async def message(client: Client, name: str) -> str:
    """Every FailedScheduling note on the pod."""
    events = (await client.list(Event, namespace=NAMESPACE)).items
    return " | ".join(
        e.note or ""
        for e in events
        if e.reason == "FailedScheduling" and e.regarding and e.regarding.name == name
    )


async def test_a_queue_borrows_what_its_cohort_leaves_idle() -> None:
    async with scheduling(pod_groups=("coscheduling",), queues=True) as (_, client):
        await nodes(client, 4)
        for made in (queue("org"), queue("team-a", "org", 16), queue("team-b", "org", 16)):
            await client.create(made)
        three = await gang(client, "a-big", 3, "team-a")  # 24 GPUs: 8 borrowed from team-b
        await eventually(lambda: bound(client, three), what="team-a's gang bound, borrowing")


async def test_a_gang_over_its_quota_waits_and_says_which_queue_holds_it() -> None:
    async with scheduling(pod_groups=("coscheduling",), queues=True) as (_, client):
        await nodes(client, 4)
        for made in (queue("org"), queue("team-a", "org", 16, borrowingLimit=0)):
            await client.create(made)
        three = await gang(client, "a-big", 3, "team-a")

        async def said() -> bool:
            return "queue team-a: 0 of 16 nvidia.com/gpu in use; the gang needs 24" in (
                await message(client, three[0])
            )

        await eventually(said, what="the quota reason on the pod")
        assert not await bound(client, three)


async def test_an_owner_under_its_quota_reclaims_whole_borrower_gangs_least_loss_first() -> None:
    async with scheduling(pod_groups=("coscheduling",), queues=True) as (_, client):
        await nodes(client, 4)
        for made in (queue("org"), queue("team-a", "org", 16), queue("team-b", "org", 16)):
            await client.create(made)
        # team-a fills the cluster: 16 GPUs of its own, 16 borrowed from idle team-b.
        first = await gang(client, "a-first", 2, "team-a")
        await eventually(lambda: bound(client, first), what="a-first bound")
        second = await gang(client, "a-second", 1, "team-a")
        third = await gang(client, "a-third", 1, "team-a")
        await eventually(lambda: bound(client, second + third), what="the borrowers bound")
        owner = await gang(client, "b-own", 2, "team-b")  # 16 GPUs: team-b's own quota

        async def evicted() -> bool:
            pods = [await client.get(Pod, n, namespace=NAMESPACE) for n in second + third]
            return all(p.metadata.deletion_timestamp is not None for p in pods)

        await eventually(evicted, what="the two one-pod borrower gangs evicted")
        for name in second + third:  # their kubelet confirms the end
            await client.delete(Pod, name, namespace=NAMESPACE, grace_period_seconds=0)
        await eventually(lambda: bound(client, owner), what="team-b's gang bound")
        # The gang team-a runs within its own quota is never a reclaim's victim.
        assert all([await exists(client, n) for n in first])


async def test_a_gang_naming_no_queue_goes_to_the_default_one_and_a_missing_queue_holds() -> None:
    async with scheduling(pod_groups=("coscheduling",), queues=True) as (_, client):
        await nodes(client, 2)
        await client.create(queue("default", None, 8))
        plain = await gang(client, "plain", 1, None)
        await eventually(lambda: bound(client, plain), what="a gang in the default queue bound")
        over = await gang(client, "over", 1, None)  # the default queue has 8 GPUs, all used
        lost = await gang(client, "lost", 1, "nope")

        async def said() -> bool:
            return "queue nope does not exist" in await message(
                client, lost[0]
            ) and "queue default: 8 of 8" in await message(client, over[0])

        await eventually(said, what="both reasons said")
        assert not await bound(client, over + lost)


async def test_priority_preemption_stays_inside_a_queue() -> None:
    async with scheduling(pod_groups=("coscheduling",), queues=True) as (_, client):
        await nodes(client, 2)
        for made in (queue("org"), queue("team-a", "org", 8), queue("team-b", "org", 8)):
            await client.create(made)
        low_a = await gang(client, "low-a", 1, "team-a")
        low_b = await gang(client, "low-b", 1, "team-b")
        await eventually(lambda: bound(client, low_a + low_b), what="both low gangs bound")
        high_a = await gang(client, "high-a", 1, "team-a", priority=100)

        async def low_a_evicted() -> bool:
            got = await client.get(Pod, low_a[0], namespace=NAMESPACE)
            return got.metadata.deletion_timestamp is not None

        await eventually(low_a_evicted, what="team-a's own low gang evicted")
        low_b_pod = await client.get(Pod, low_b[0], namespace=NAMESPACE)
        assert low_b_pod.metadata.deletion_timestamp is None
        await client.delete(Pod, low_a[0], namespace=NAMESPACE, grace_period_seconds=0)
        await eventually(lambda: bound(client, high_a), what="the high gang bound")


async def test_a_queues_status_shows_its_use_borrowing_gangs_and_whether_it_admits() -> None:
    async with scheduling(pod_groups=("coscheduling",), queues=True) as (_, client):
        await nodes(client, 4)
        for made in (queue("org"), queue("team-a", "org", 16), queue("team-b", "org", 16)):
            await client.create(made)
        await client.create(queue("team-x", "team-y", 8))  # its parent does not exist
        three = await gang(client, "a-big", 3, "team-a")
        await eventually(lambda: bound(client, three), what="team-a's gang bound")
        waiting = await gang(client, "a-more", 2, "team-a")  # 40 of the cohort's 32: waits

        async def shown() -> bool:
            a = await client.get(Queue, "team-a")
            b = await client.get(Queue, "team-b")
            x = await client.get(Queue, "team-x")
            if a.status is None or b.status is None or x.status is None:
                return False
            used = a.status.flavors[0].resources[0] if a.status.flavors else None
            lent = b.status.flavors[0].resources[0] if b.status.flavors else None
            return (
                used is not None
                and (used.used, used.borrowed) == ("24", "8")
                and lent is not None
                and lent.lent == "8"
                and (a.status.admitted_gangs, a.status.pending_gangs) == (1, 1)
                and a.status.weighted_share == 0.25
                and [(c.type, c.status) for c in x.status.conditions] == [("Ready", "False")]
            )

        await eventually(shown, what="the queues' status", within=30)
        assert not await bound(client, waiting)
        x = await client.get(Queue, "team-x")
        assert x.status is not None
        assert "its parent queue team-y does not exist" in x.status.conditions[0].message


async def test_a_cohort_may_preempt_for_fair_share_but_only_above_the_preemptors_share() -> None:
    async with scheduling(pod_groups=("coscheduling",), queues=True) as (_, client):
        await nodes(client, 4)
        org = queue("org", None, 16)
        org.spec.preemption.fair_share = True
        for made in (org, queue("team-a", "org", 8), queue("team-b", "org", 8)):
            await client.create(made)
        # team-a takes the whole cluster: its 8, team-b's idle 8 and the cohort's 16.
        a_gangs = [await gang(client, f"a{i}", 1, "team-a") for i in range(4)]
        await eventually(
            lambda: bound(client, [p for g in a_gangs for p in g]), what="team-a's gangs bound"
        )
        b_own = await gang(client, "b-own", 1, "team-b")  # within team-b's quota: a reclaim
        first = await one_evicted(client, a_gangs)
        await eventually(lambda: bound(client, b_own), what="team-b's own gang bound")
        # team-b over its quota now: only fair share may evict, and only while team-a's share
        # is above team-b's with the gang: team-a borrows 16 (0.5), team-b would borrow 8.
        b_more = await gang(client, "b-more", 1, "team-b")
        second = await one_evicted(client, [g for g in a_gangs if g != first])
        await eventually(lambda: bound(client, b_more), what="team-b's second gang bound")
        # Now team-a borrows 8 and team-b 8 (0.25 each): a third gang of team-b would take
        # team-b to 0.5, not below team-a's 0.25: no eviction, it waits for quota.
        b_third = await gang(client, "b-third", 1, "team-b")

        async def said() -> bool:
            return "queue team-b:" in await message(client, b_third[0])

        await eventually(said, what="team-b's third gang told it waits for quota")
        for left in (g for g in a_gangs if g not in (first, second)):
            got = await client.get(Pod, left[0], namespace=NAMESPACE)
            assert got.metadata.deletion_timestamp is None


async def one_evicted(client: Client, gangs: list[list[str]]) -> list[str]:
    """Until one of the one-pod ``gangs`` is being evicted; it ends, as its kubelet would end
    it; that gang."""
    found: list[list[str]] = []

    async def going() -> bool:
        for members in gangs:
            got = await client.get(Pod, members[0], namespace=NAMESPACE)
            if got.metadata.deletion_timestamp is not None:
                found.append(members)
                return True
        return False

    await eventually(going, what="a gang evicted")
    await client.delete(Pod, found[0][0], namespace=NAMESPACE, grace_period_seconds=0)
    return found[0]


async def test_a_queue_that_enforces_its_max_run_time_evicts_a_gang_past_it() -> None:
    now = [1_800_000_000.0]
    async with scheduling(pod_groups=("coscheduling",), queues=True, wall_clock=lambda: now[0]) as (
        _,
        client,
    ):
        await nodes(client, 2)
        limited = queue("limited", None, 16)
        limited.spec.max_run_seconds = 600
        limited.spec.enforce_max_run_time = True
        await client.create(limited)
        running = await gang(client, "long", 2, "limited")
        await eventually(lambda: bound(client, running), what="the gang bound")
        started = datetime.fromtimestamp(now[0], UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for name in running:  # as its kubelet reports the start
            await client.patch(
                Pod, name, {"status": {"phase": "Running", "startTime": started}},
                namespace=NAMESPACE, subresource="status",
            )  # fmt: skip
        now[0] += 599
        await gang(client, "nudge-1", 1, "nope")  # any change: a pass
        await eventually(lambda: said_waits(client, "nudge-1-0"), what="the first pass looked")
        assert not any([await going(client, n) for n in running])
        now[0] += 2
        await gang(client, "nudge-2", 1, "nope")
        await eventually(lambda: all_going(client, running), what="the gang evicted past its 600 s")
        events = (await client.list(Event, namespace=NAMESPACE)).items
        notes = [e.note for e in events if e.reason == "Preempted"]
        assert any(
            note
            and "Evicted: the gang ran past 600 s, the maximum run time of queue limited" in note
            for note in notes
        )


async def said_waits(client: Client, name: str) -> bool:
    return "queue nope does not exist" in await message(client, name)


async def going(client: Client, name: str) -> bool:
    got = await client.get(Pod, name, namespace=NAMESPACE)
    return got.metadata.deletion_timestamp is not None


async def all_going(client: Client, names: list[str]) -> bool:
    return all([await going(client, n) for n in names])


async def test_a_volcano_podgroup_names_its_queue_in_its_spec() -> None:
    async with scheduling(pod_groups=("volcano",), queues=True) as (_, client):
        await nodes(client, 2)
        await client.create(queue("team-v", None, 8))
        for name in ("first", "second"):
            await client.create(volcano_podgroup(name, 1, queue="team-v"))
            await client.create(
                pod(f"{name}-0", gpus=8, scheduler=SCHEDULER, pod_group=("volcano", name))
            )
        await eventually(lambda: bound(client, ["first-0"]), what="the first bound")

        async def second_held() -> bool:
            return "queue team-v: 8 of 8 nvidia.com/gpu in use" in await message(client, "second-0")

        await eventually(second_held, what="the second held by team-v's quota")
        assert not await bound(client, ["second-0"])
