"""Sharded hello operators under crashes: shard ``a`` (the explored operator, which starts first
and so also runs the sharder) and shard ``b`` (started by the workload on a client of its own,
never faulted) share a ring of Hellos, on FakeCluster and a virtual clock with
controller-runtime's lease timings (15 s, 10 s, 2 s).

The scenario: ``b`` starts; 10 Hellos are made and greeted; two change their greeting, one is
deleted; then ``b`` stops cleanly (its Lease released, its objects moved to ``a``). The explored
writes are ``a``'s: its greetings and statuses, the sharder's label patches, and its shard's,
the sharder's and the members' Lease writes (Leases are not ignored here: they are what the
sharding rests on).

Oracles: the kit's (end state, recreations, orphans, duplicates), and:

- no two shards reconcile one object at once (each reconcile is recorded with its shard and
  its start and end on the loop clock; a reconcile cut short by its operator's death is left
  out: its process is gone, and its writes after the fault never reached the server);
- no Hello goes without a shard label longer than the lease duration plus the takeover bound
  (renew deadline + retry period), from the history's times on the loop clock;
- at the end every Hello is greeted for its generation (what the operator is for).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pytest
from examples.hello.operator import Hello, HelloReconciler, HelloSpec

from _crash_operators import wait_until
from _hello import all_greeted, hello_greeted
from _shard_managers import shard_manager
from crdkit import Context
from crdkit.client import Client
from crdkit.resources import Lease, ObjectMeta
from crdkit.runtime import Manager
from crdkit.runtime.sharding import shard_label
from crdkit.testing import run_on_virtual_clock
from crdkit.testing.crashes import (
    CrashExplorer,
    FakeClusterSite,
    History,
    HistoryEvent,
    Scenario,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]

RING = "hellos"
LABEL = shard_label(RING)
NAMES = [f"h{i}" for i in range(10)]
LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = 15.0, 10.0, 2.0
UNOWNED_BOUND = LEASE_DURATION + RENEW_DEADLINE + RETRY_PERIOD


@dataclass
class Reconcile:
    shard: str
    key: str
    start: float
    end: float = -1.0
    completed: bool = False
    identity: str = ""
    """The replica's identity (each incarnation its own)."""


RECONCILES: list[Reconcile] = []
"""This run's reconciles, of both shards (reset by the workload at the start of each run)."""


class RecordingHello(HelloReconciler):
    name = "hello"

    def __init__(self, shard: str, identity: str) -> None:
        self.shard, self.identity = shard, identity

    async def reconcile(self, ctx: Context, obj: Hello) -> None:
        loop = asyncio.get_running_loop()
        key = f"{obj.metadata.namespace}/{obj.metadata.name}"
        record = Reconcile(self.shard, key, loop.time(), identity=self.identity)
        RECONCILES.append(record)
        try:
            await asyncio.sleep(0.05)  # long enough for a racing hand-off to show as an overlap
            await super().reconcile(ctx, obj)
            record.completed = True
        finally:
            record.end = loop.time()


INCARNATIONS = itertools.count()


def replica(client: Client, namespace: str, shard: str) -> Manager:
    """Shard ``shard``; each incarnation with an identity of its own, as a restarted pod has
    (``<hostname>_<uuid>`` by default): a restarted ``a`` must wait out its predecessor's
    Leases (its shard's, and the sharder's if it held it), as ``b`` must to take them over."""
    identity = f"{shard}-{next(INCARNATIONS)}"
    manager = shard_manager(
        client,
        namespace,
        RING,
        shard,
        identity=identity,
        lease_duration=LEASE_DURATION,
        renew_deadline=RENEW_DEADLINE,
        retry_period=RETRY_PERIOD,
    )
    manager.add(RecordingHello(shard, identity))
    return manager


def shard_a(client: Client, namespace: str) -> Manager:
    return replica(client, namespace, "a")


async def _greeted_and_labelled(client: Client, namespace: str, shards: set[str]) -> bool:
    hellos = (await client.list(Hello, namespace=namespace)).items
    for hello in hellos:
        if hello.metadata.deletion_timestamp is not None:
            return False
        if hello.metadata.labels.get(LABEL) not in shards:
            return False
        message = f"{hello.spec.greeting}, {hello.spec.target}!"
        name = hello.metadata.name or ""
        if not await hello_greeted(client, namespace, message, name=name, generation_observed=True):
            return False
    return True


async def workload(client: Client, namespace: str) -> None:
    RECONCILES.clear()
    b = replica(client, namespace, "b")
    running = asyncio.create_task(b.run(), name="shard b")
    try:
        await b.wait_ready()
        for name in NAMES:
            spec = HelloSpec(target=name)
            await client.create(
                Hello(metadata=ObjectMeta(name=name, namespace=namespace), spec=spec)
            )

        async def both() -> bool:
            return await _greeted_and_labelled(client, namespace, {"a", "b"})

        await wait_until(both, 600, "every Hello greeted by one of the shards")
        for name in NAMES[:2]:
            await client.patch(Hello, name, {"spec": {"greeting": "Hi"}}, namespace=namespace)
        await client.delete(Hello, NAMES[-1], namespace=namespace)
        await wait_until(both, 600, "the changes greeted")
    finally:
        b.stop()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(running, 120)

    async def only_a() -> bool:
        return await _greeted_and_labelled(client, namespace, {"a"})

    await wait_until(only_a, 600, "every Hello moved to shard a once b stopped")


def one_shard_at_a_time(_history: History) -> Iterable[str]:
    done = [r for r in RECONCILES if r.completed]
    for i, first in enumerate(done):
        for second in done[i + 1 :]:
            if (
                first.key == second.key
                and first.shard != second.shard
                and first.start < second.end
                and second.start < first.end
            ):
                yield (
                    f"{first.key} reconciled by {first.shard} ({first.start:.2f}-{first.end:.2f})"
                    f" and {second.shard} ({second.start:.2f}-{second.end:.2f}) at once"
                )


def never_unowned_for_long(history: History) -> Iterable[str]:
    since: dict[str, float] = {}  # name -> when it was last seen without a shard label
    worst: dict[str, float] = {}
    last = history.events[-1].at if history.events else 0.0
    for event in history.events:
        if event.kind != "Hello":
            continue
        name = event.key[2]
        labels = event.metadata.get("labels") or {}
        if event.type == "DELETED" or labels.get(LABEL):
            if name in since:
                worst[name] = max(worst.get(name, 0.0), event.at - since.pop(name))
        else:
            since.setdefault(name, event.at)
    for name, start in since.items():
        worst[name] = max(worst.get(name, 0.0), last - start)
    for name, gap in sorted(worst.items()):
        if gap > UNOWNED_BOUND:
            yield f"Hello {name} went {gap:.1f}s without a shard (bound {UNOWNED_BOUND:g}s)"


def _deaths(history: History) -> list[tuple[str, str, float, bool]]:
    """(shard, identity, when, released) of each shard holder that stopped: its release (a
    clean stop), or its last renewal when another took the Lease over or none renewed it
    again for a lease duration."""
    last: dict[str, tuple[str, float]] = {}  # shard -> (holder, last renewal)
    deaths: list[tuple[str, str, float, bool]] = []
    prefix = f"{RING}-shard-"
    for event in history.events:
        if event.kind != "Lease" or not event.key[2].startswith(prefix):
            continue
        shard = event.key[2].removeprefix(prefix)
        holder = str((event.obj.get("spec") or {}).get("holderIdentity") or "")
        previous = last.get(shard)
        if previous is not None and previous[0] and holder != previous[0]:
            released = not holder
            deaths.append((shard, previous[0], event.at if released else previous[1], released))
        last[shard] = (holder, event.at)
    end = history.events[-1].at if history.events else 0.0
    for shard, (holder, renewed) in last.items():
        if holder and end - renewed > LEASE_DURATION:
            deaths.append((shard, holder, renewed, False))
    return deaths


def dead_shards_objects_taken_over(history: History) -> Iterable[str]:
    """Each Hello labelled for a shard whose holder died is, within the bound of that death,
    relabelled, deleted, or reconciled by another replica (the survivors' takeover). The
    release by the explored operator's graceful stop at the end of a run is not judged:
    nothing after it is recorded."""
    hellos = [event for event in history.events if event.kind == "Hello"]
    for shard, identity, died, released in _deaths(history):
        if released and not any(event.at > died for event in hellos):
            continue  # the run's end
        live: dict[str, str | None] = {}
        for event in hellos:
            if event.at > died:
                break
            labels = event.metadata.get("labels") or {}
            live[event.key[2]] = None if event.type == "DELETED" else labels.get(LABEL)
        held = {name for name, label in live.items() if label == shard}
        deadline = died + UNOWNED_BOUND
        for event in hellos:
            labels = event.metadata.get("labels") or {}
            moved = event.type == "DELETED" or labels.get(LABEL) != shard
            if died < event.at <= deadline and moved:
                held.discard(event.key[2])
        for record in RECONCILES:
            other = record.completed and record.identity != identity
            if other and died < record.start and record.end <= deadline:
                held.discard(record.key.split("/", 1)[1])
        for name in sorted(held):
            yield (
                f"Hello {name} of shard {shard} was not taken over within {UNOWNED_BOUND:g}s "
                f"of its holder {identity}'s end at {died:.1f}s"
            )


def sharder_scenario() -> Scenario:
    return Scenario(
        operator=shard_a,
        workload=workload,
        kinds=[Hello],
        history_only=[Lease],  # the shards' Leases: who held each, until when
        settle=1.5,  # shorter than the renew period: renewals alone do not keep a run moving
        timeout=900.0,
        invariants=[
            one_shard_at_a_time,
            never_unowned_for_long,
            dead_shards_objects_taken_over,
            all_greeted,
        ],
        ignored=frozenset({"events", "events.events.k8s.io"}),
    )


def explorer(**options: Any) -> CrashExplorer:
    return CrashExplorer(sharder_scenario(), FakeClusterSite([Hello]), **options)


def test_sharded_hellos_survive_kills_lost_answers_and_stale_restarts() -> None:
    """Every write of ``a``, each fault but ``unobserved`` (below): 4 x ~50 cases."""
    faults = ("kill-before", "kill-after", "lost-response", "stale")
    report = run_on_virtual_clock(explorer(faults=faults).check())
    print(report.summary())


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason=(
        "open (issue 43): what the sharder writes reaches the ring only through watches: a "
        "dropped event of the members Lease (unobserved:3, :4, :27) or of a label patch that "
        "gives an object to shard a (unobserved:8, :9, :10, :13), with no later event of that "
        "object, stalls it for good (no resync). A real watch does not drop events silently, "
        "so this is the fault model's worst case, not a failure seen in a cluster"
    ),
)
def test_sharded_hellos_under_unobserved_writes() -> None:
    run_on_virtual_clock(explorer(faults=("unobserved",)).check())


def test_the_sharding_invariants_can_fail() -> None:
    RECONCILES[:] = [
        Reconcile("a", "ns/h0", 1.0, 2.0, True),
        Reconcile("b", "ns/h0", 1.5, 3.0, True),
    ]
    assert len(list(one_shard_at_a_time(History("ns")))) == 1
    RECONCILES[1].start = 2.0  # one after the other: fine
    assert list(one_shard_at_a_time(History("ns"))) == []
    RECONCILES.clear()

    def event(seq: int, at: float, labels: dict[str, str]) -> HistoryEvent:
        obj = {"kind": "Hello", "metadata": {"name": "h0", "namespace": "ns", "labels": labels}}
        return HistoryEvent(seq, "MODIFIED" if seq > 1 else "ADDED", "Hello", obj, at)

    late = History("ns", [event(1, 0.0, {}), event(2, UNOWNED_BOUND + 1, {LABEL: "a"})])
    assert len(list(never_unowned_for_long(late))) == 1
    soon = History("ns", [event(1, 0.0, {}), event(2, UNOWNED_BOUND - 1, {LABEL: "a"})])
    assert list(never_unowned_for_long(soon)) == []


def test_a_restarted_sharder_replica_stands_for_the_sharder_at_once() -> None:
    # kill-after:23: a (the sharder) dies, b stops cleanly; the restarted a stood for the
    # sharder's Lease only once it held its shard's (a lease duration), then waited one more
    # before it could take the dead holder's: b's objects went 30 s without an owner.
    report = run_on_virtual_clock(explorer(cases=["kill-after:23"]).check())
    [result] = report.results
    assert str(result.write) == "patch configmaps crash/h3-greeting (#2)"
    assert result.outcome == "passed"
