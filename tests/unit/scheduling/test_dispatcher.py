"""`Dispatcher` on the fake cluster: it performs a pass's decisions as API calls and sends what
the apiserver answered back as values, a bound gang as `Settled` then `Bound`, a refused bind
as `BindRefused` then `Settled` (its bound pods rolled back), and hands `Later` to the queue;
a waiting gang is told on its pods and on its PodGroup."""

from __future__ import annotations

from typing import TYPE_CHECKING

from _fake_scheduling import pod_group_kind

import factories
from crdkit.resources import Event, Pod, PodGroup
from crdkit.runtime.events import EventRecorder
from crdkit.runtime.store import Store
from crdkit.scheduling import Binder, ClusterMirror, GroupRef, PodBinding
from crdkit.scheduling.assumptions import assume
from crdkit.scheduling.decisions import Bind, Evict, Later, RollBack, Wait
from crdkit.scheduling.dispatcher import BindRefused, Bound, Dispatcher, Outcome, Settled
from crdkit.scheduling.groups.coscheduling import CoschedulingPodGroup
from crdkit.scheduling.groups.kubernetes import INITIALLY_SCHEDULED
from crdkit.scheduling.pending import PendingGroup
from crdkit.scheduling.preemption import RunningGang, VictimPod
from crdkit.scheduling.reporting import Reporter
from crdkit.testing import FakeCluster, FakeKind

if TYPE_CHECKING:
    from crdkit import _placer
    from crdkit.client import Client

REF = GroupRef("pod", "ml", "p")


def placed(mirror: ClusterMirror) -> _placer.Outcome:
    """An answer of the placer to hand the bind (the dispatcher reads its domain only)."""
    gang = factories.gang(factories.task("pods", 1, gpus=8), name=str(REF))
    records = mirror.cluster.place_all_records([mirror.cluster.compile(gang)])
    return records[0]


async def dispatch(
    client: Client, pod: Pod, *, create: bool
) -> tuple[list[Outcome], list[tuple[GroupRef, float]], ClusterMirror]:
    mirror = ClusterMirror([])
    mirror.set_node(factories.node("n1"))
    if create:
        await client.create(pod)
    outcomes: list[Outcome] = []
    later: list[tuple[GroupRef, float]] = []
    dispatcher = Dispatcher(
        client,
        Binder(client, mirror),
        EventRecorder(client, reporting_controller="crdkit.io/s", reporting_instance="test"),
        mirror,
        Store(),
        Reporter(mirror, lambda: 0.0, (1.0, 30.0), 10.0),
        later=lambda ref, delay: later.append((ref, delay)),
        outcome=outcomes.append,
        shutdown_grace=5.0,
    )
    binding = PodBinding("ml", "p", "n1", {"nvidia.com/gpu": 8000}, pod.metadata.uid)
    group = PendingGroup(REF, pending=[pod])
    dispatcher.apply(
        [
            Later(REF, 2.5),
            Wait(group, "Unschedulable", "told first"),
            Bind(group, assume(mirror, [binding]), placed(mirror)),
        ]
    )
    assert dispatcher.busy(REF)
    await dispatcher.drain()
    assert not dispatcher.busy(REF)
    assert not dispatcher.in_flight
    return outcomes, later, mirror


async def test_a_bound_gang_is_settled_then_bound() -> None:
    async with FakeCluster().client() as client:
        outcomes, later, _ = await dispatch(client, factories.pod("p", gpus=8), create=True)
        assert outcomes == [Settled(REF), Bound(REF)]
        assert later == [(REF, 2.5)]
        pod = await client.get(Pod, "p", namespace="ml")
        assert pod.spec.node_name == "n1"
        reasons = [e.reason for e in (await client.list(Event, namespace="ml")).items]
        assert reasons == ["FailedScheduling", "Scheduled"]  # in the order decided


async def test_a_refused_bind_is_backed_off_and_its_room_given_back() -> None:
    async with FakeCluster().client() as client:
        pod = factories.pod("p", gpus=8, uid="gone")
        outcomes, _, mirror = await dispatch(client, pod, create=False)  # no such pod
        assert outcomes == [BindRefused(REF), Settled(REF)]
        assert not mirror.is_counted("ml/p")


async def test_a_waiting_gang_is_told_on_its_pods_and_its_podgroup() -> None:
    kind = FakeKind.of_crd(CoschedulingPodGroup, status_subresource=True)
    async with FakeCluster(kinds=[kind]).client() as client:
        podgroup = await client.create(factories.coscheduling_podgroup("job", 2))
        pod = await client.create(factories.pod("job-0", pod_group=("coscheduling", "job")))
        mirror = ClusterMirror([])
        dispatcher = Dispatcher(
            client,
            Binder(client, mirror),
            EventRecorder(client, reporting_controller="crdkit.io/s", reporting_instance="t"),
            mirror,
            Store(),
            Reporter(mirror, lambda: 0.0, (1.0, 30.0), 10.0),
            later=lambda ref, delay: None,
            outcome=lambda outcome: None,
            shutdown_grace=5.0,
        )
        group = PendingGroup(GroupRef("coscheduling", "ml", "job"), pending=[pod])
        group.podgroup = podgroup
        dispatcher.apply([Wait(group, "WaitingForPods", "1 of the 2 pods of the gang exist")])
        await dispatcher.drain()
        dispatcher.apply([Wait(group, "Unschedulable", "0/0 nodes are available")])
        await dispatcher.drain()
        told = sorted(
            (e.regarding.kind if e.regarding else "", e.type or "", e.reason or "")
            for e in (await client.list(Event, namespace="ml")).items
        )
        # A gang whose pods are still being made is healthy: no Warning for it.
        assert told == [
            ("Pod", "Normal", "WaitingForPods"),
            ("Pod", "Warning", "FailedScheduling"),
            ("PodGroup", "Normal", "WaitingForPods"),
            ("PodGroup", "Warning", "FailedScheduling"),
        ]


def new_dispatcher(
    client: Client, pods: Store[Pod], mirror: ClusterMirror, outcomes: list[Outcome]
) -> Dispatcher:
    return Dispatcher(
        client,
        Binder(client, mirror),
        EventRecorder(client, reporting_controller="crdkit.io/s", reporting_instance="test"),
        mirror,
        pods,
        Reporter(mirror, lambda: 0.0, (1.0, 30.0), 10.0),
        later=lambda ref, delay: None,
        outcome=outcomes.append,
        shutdown_grace=5.0,
    )


async def test_a_gang_under_eviction_is_busy_until_the_cache_shows_its_pods_deleted() -> None:
    # The pass leaves a victim alone while this scheduler evicts it: its DisruptionTarget marks
    # are this eviction's, not one a stopped scheduler left to finish (`RollBack.evicting`).
    # That holds until the pod cache shows the deletes, not only until they returned: a pass
    # between the two read a victim's pod marked and not terminating, took the eviction for
    # one cut short and rolled it back, which counted its terminating pods free (the queue
    # machine's property test: a preemptor bound beside them).
    cluster = FakeCluster()
    async with cluster.client() as client:
        victim = factories.pod("v-0", gpus=8, namespace="ml", node="n1", uid="v-0")
        await client.create(victim)
        created = await client.get(Pod, "v-0", namespace="ml")
        pods: Store[Pod] = Store()
        pods.upsert(created)
        mirror = ClusterMirror([])
        mirror.set_node(factories.node("n1"))
        mirror.set_pod(created)
        outcomes: list[Outcome] = []
        dispatcher = new_dispatcher(client, pods, mirror, outcomes)
        gone = GroupRef("pod", "ml", "v")
        pod = VictimPod("ml/v-0", "n1", {"nvidia.com/gpu": 8000}, created.metadata.uid)
        evict = Evict(REF, 100, [RunningGang(str(gone), 0, None, (pod,))], "n1")
        dispatcher.apply([evict])
        assert dispatcher.busy(gone)
        await dispatcher.drain()
        assert outcomes == [Settled(gone)]  # looked at again once its calls returned
        (left,) = (await client.list(Pod, namespace="ml")).items  # its grace period runs
        assert left.metadata.deletion_timestamp is not None
        assert dispatcher.busy(gone)  # the cache still shows the pod as it was
        pods.upsert(left)
        assert not dispatcher.busy(gone)
        assert mirror.node_of("ml/v-0") == "n1"  # it holds its node until it is gone


async def test_a_victim_deleted_elsewhere_or_not_at_all_is_not_waited_for() -> None:
    # A pod replaced by another of its name, or whose delete failed, is no deletion the cache
    # will show: the victim is not busy once the calls return (a failed delete is left to
    # the roll-back of an eviction cut short).
    cluster = FakeCluster()
    async with cluster.client() as client:
        await client.create(factories.pod("v-0", gpus=8, namespace="ml", node="n1", uid="v-0"))
        created = await client.get(Pod, "v-0", namespace="ml")
        pods: Store[Pod] = Store()
        pods.upsert(created)
        mirror = ClusterMirror([])
        mirror.set_node(factories.node("n1"))
        dispatcher = new_dispatcher(client, pods, mirror, [])
        gone = GroupRef("pod", "ml", "v")
        stale = VictimPod("ml/v-0", "n1", {"nvidia.com/gpu": 8000}, "an-older-uid")
        dispatcher.apply([Evict(REF, 100, [RunningGang(str(gone), 0, None, (stale,))], "n1")])
        await dispatcher.drain()
        assert not dispatcher.busy(gone)
        (left,) = (await client.list(Pod, namespace="ml")).items
        assert left.metadata.deletion_timestamp is None  # the uid precondition kept it


async def test_an_eviction_cut_short_is_finished_with_its_pods_still_counted() -> None:
    # A stopped scheduler marked both pods of the victim and deleted one: the other is deleted
    # with its grace period, and both hold their node until they are gone. (The roll-back of
    # a gang torn mid-bind deletes with grace 0 and counts the room free at once; done so
    # here, a preemptor was bound beside the victim's terminating pods.)
    cluster = FakeCluster()
    async with cluster.client() as client:
        for index in range(2):
            await client.create(
                factories.pod(f"v-{index}", gpus=4, namespace="ml", node="n1", uid=f"v-{index}")
            )
        await client.delete(Pod, "v-0", namespace="ml")  # the stopped scheduler's delete
        first = await client.get(Pod, "v-0", namespace="ml")
        second = await client.get(Pod, "v-1", namespace="ml")
        assert first.metadata.deletion_timestamp is not None
        pods: Store[Pod] = Store()
        mirror = ClusterMirror([])
        mirror.set_node(factories.node("n1"))
        for pod in (first, second):
            pods.upsert(pod)
            mirror.set_pod(pod)
        outcomes: list[Outcome] = []
        dispatcher = new_dispatcher(client, pods, mirror, outcomes)
        gone = GroupRef("pod", "ml", "v")
        dispatcher.apply([RollBack(PendingGroup(gone, bound=[first, second]), evicting=True)])
        await dispatcher.drain()
        assert outcomes == [Settled(gone)]
        left = {p.metadata.name: p for p in (await client.list(Pod, namespace="ml")).items}
        assert sorted(left) == ["v-0", "v-1"]  # both in their grace period
        assert left["v-1"].metadata.deletion_timestamp is not None
        assert mirror.node_of("ml/v-0") == mirror.node_of("ml/v-1") == "n1"
        assert mirror.used("n1").get("nvidia.com/gpu") == 8000
        told = [e.regarding.name for e in (await client.list(Event, namespace="ml")).items]
        assert told == ["v-1"]  # the pod already going is neither told nor deleted again
        assert dispatcher.busy(gone)  # until the cache shows v-1 terminating
        pods.upsert(left["v-1"])
        assert not dispatcher.busy(gone)


async def test_a_status_made_from_an_older_podgroup_does_not_land_over_a_newer_one() -> None:
    # Status writes run concurrently, and after a restart on a lagging cache a status is made
    # from an old read: written without the version it was made from, a stale False landed
    # over Kubernetes' terminal PodGroupInitiallyScheduled True (the scheduler crash tests).
    async with FakeCluster(kinds=[pod_group_kind("kubernetes")]).client() as client:
        cached = await client.create(factories.kubernetes_podgroup("job", 2))
        pod = await client.create(factories.pod("job-0", pod_group=("kubernetes", "job")))
        scheduled = {
            "type": INITIALLY_SCHEDULED,
            "status": "True",
            "reason": "Scheduled",
            "message": "2 pods bound, of the 2 the gang needs",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
        await client.patch(  # what a scheduler before this one wrote
            PodGroup,
            "job",
            {"status": {"conditions": [scheduled]}},
            namespace="ml",
            subresource="status",
        )
        dispatcher = new_dispatcher(client, Store(), ClusterMirror([]), [])
        group = PendingGroup(GroupRef("kubernetes", "ml", "job"), pending=[pod])
        group.podgroup = cached  # the cache lags: no condition yet
        dispatcher.apply([Wait(group, "WaitingForPods", "1 of the 2 pods of the gang exist")])
        await dispatcher.drain()
        stored = await client.get(PodGroup, "job", namespace="ml")
        assert stored.status is not None
        # Refused as made from an older version, then made again from a fresh read.
        assert [(c.type, c.status) for c in stored.status.conditions or []] == [
            (INITIALLY_SCHEDULED, "True")
        ]
