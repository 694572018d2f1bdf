"""Leader hand-over under crashes: the hello operator with leader election, replica ``a`` (the
explored operator, which starts first and leads) beside replica ``b`` (a standby the workload
starts on a client of its own, never faulted), on FakeCluster and a virtual clock with
controller-runtime's lease timings (15 s, 10 s, 2 s). Each incarnation of ``a`` has an identity
of its own, as a restarted pod has: a crash is a hand-over, to ``b`` or to the new ``a``.

The scenario: ``b`` starts; three Hellos are made and greeted; one changes its greeting, one is
deleted; ``b`` stops (releasing the Lease if it holds it). Every write of ``a`` is explored,
its Lease writes included (creating, acquiring and renewing the leader's Lease).

Oracles: the kit's, and:

- never two leaders acting: reconciles are recorded with the replica's identity and their
  start and end on the loop clock; two of different identities never overlap (a reconcile
  cut short by its operator's death is left out: that process is gone);
- a Lease whose holder died is taken over within lease duration + retry period of the
  holder's last renewal (from the Lease's history, on the loop clock);
- at the end every Hello is greeted for its generation.
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
from crdkit import Context
from crdkit.client import Client
from crdkit.resources import ConfigMap, Lease, ObjectMeta
from crdkit.runtime import Manager
from crdkit.testing import run_on_virtual_clock, virtual_clock_manager
from crdkit.testing.crashes import (
    CrashExplorer,
    FakeClusterSite,
    History,
    HistoryEvent,
    Scenario,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

LEASE = "hello-leader"
LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = 15.0, 10.0, 2.0
NAMES = ["h0", "h1", "h2"]


@dataclass
class Reconcile:
    identity: str
    key: str
    start: float
    end: float = -1.0
    completed: bool = False


RECONCILES: list[Reconcile] = []
"""This run's reconciles, of both replicas (reset by the workload at the start of each run)."""
INCARNATIONS = itertools.count()


class RecordingHello(HelloReconciler):
    name = "hello"

    def __init__(self, identity: str) -> None:
        self.identity = identity

    async def reconcile(self, ctx: Context, obj: Hello) -> None:
        loop = asyncio.get_running_loop()
        key = f"{obj.metadata.namespace}/{obj.metadata.name}"
        record = Reconcile(self.identity, key, loop.time())
        RECONCILES.append(record)
        try:
            await asyncio.sleep(0.05)  # long enough for two leaders at once to overlap
            await super().reconcile(ctx, obj)
            record.completed = True
        finally:
            record.end = loop.time()


def replica(client: Client, namespace: str, name: str) -> Manager:
    identity = f"{name}-{next(INCARNATIONS)}"
    manager = virtual_clock_manager(
        client,
        namespace=namespace,
        leader_election=True,
        leader_election_id=LEASE,
        leader_election_namespace=namespace,
        identity=identity,
        lease_duration=LEASE_DURATION,
        renew_deadline=RENEW_DEADLINE,
        retry_period=RETRY_PERIOD,
    )
    manager.add(RecordingHello(identity))
    return manager


def replica_a(client: Client, namespace: str) -> Manager:
    return replica(client, namespace, "a")


async def _all_greeted(client: Client, namespace: str) -> bool:
    for hello in (await client.list(Hello, namespace=namespace)).items:
        if hello.metadata.deletion_timestamp is not None:
            return False
        message = f"{hello.spec.greeting}, {hello.spec.target}!"
        name = hello.metadata.name or ""
        if not await hello_greeted(client, namespace, message, name=name, generation_observed=True):
            return False
    return True


async def workload(client: Client, namespace: str) -> None:
    RECONCILES.clear()
    b = replica(client, namespace, "b")
    running = asyncio.create_task(b.run(), name="replica b")
    try:
        for name in NAMES:
            meta = ObjectMeta(name=name, namespace=namespace)
            await client.create(Hello(metadata=meta, spec=HelloSpec(target=name)))
        await wait_until(lambda: _all_greeted(client, namespace), 600, "every Hello greeted")
        await client.patch(Hello, NAMES[0], {"spec": {"greeting": "Hi"}}, namespace=namespace)
        await client.delete(Hello, NAMES[-1], namespace=namespace)
        await wait_until(lambda: _all_greeted(client, namespace), 600, "the changes greeted")
    finally:
        b.stop()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(running, 120)


def one_leader_at_a_time(_history: History) -> Iterable[str]:
    done = sorted((r for r in RECONCILES if r.completed), key=lambda r: r.start)
    for i, first in enumerate(done):
        for second in done[i + 1 :]:
            if second.start >= first.end:
                break
            if first.identity != second.identity:
                yield (
                    f"{first.identity} reconciled {first.key} ({first.start:.2f}-{first.end:.2f})"
                    f" while {second.identity} reconciled {second.key} "
                    f"({second.start:.2f}-{second.end:.2f})"
                )


def _holder(event: HistoryEvent) -> str:
    return str((event.obj.get("spec") or {}).get("holderIdentity") or "")


def hand_over_in_time(history: History) -> Iterable[str]:
    bound = LEASE_DURATION + RETRY_PERIOD
    holder, last_seen = "", 0.0
    for event in history.events:
        if event.kind != "Lease" or event.key[2] != LEASE or event.type == "DELETED":
            continue
        now = _holder(event)
        released = not now  # a clean stop: anyone may take it at once
        if holder and now and now != holder and event.at - last_seen > bound:
            yield (
                f"{now} took the Lease from {holder} {event.at - last_seen:.1f}s after its "
                f"last renewal (bound {bound:g}s)"
            )
        if not released:
            holder, last_seen = now, event.at
        else:
            holder = ""


def leader_scenario() -> Scenario:
    return Scenario(
        operator=replica_a,
        workload=workload,
        kinds=[Hello, ConfigMap],
        history_only=[Lease],
        settle=1.5,  # shorter than the renew period: renewals alone do not keep a run moving
        timeout=900.0,
        invariants=[one_leader_at_a_time, hand_over_in_time, all_greeted],
        ignored=frozenset({"events", "events.events.k8s.io"}),
    )


def explorer(**options: Any) -> CrashExplorer:
    return CrashExplorer(leader_scenario(), FakeClusterSite([Hello]), **options)


def test_leader_hand_over_survives_a_crash_at_every_write() -> None:
    report = run_on_virtual_clock(explorer().check())
    print(report.summary())
    if report.baseline.writes and explorer().cases is None:
        writes = [str(w) for w in report.baseline.writes]
        assert any(w.startswith("update leases.coordination.k8s.io") for w in writes), writes


def test_the_leader_invariants_can_fail() -> None:
    RECONCILES[:] = [
        Reconcile("a-0", "ns/h0", 1.0, 2.0, completed=True),
        Reconcile("b-1", "ns/h1", 1.5, 3.0, completed=True),
    ]
    assert len(list(one_leader_at_a_time(History("ns")))) == 1
    RECONCILES[1].start = 2.0
    assert list(one_leader_at_a_time(History("ns"))) == []
    RECONCILES.clear()

    def lease(seq: int, at: float, holder: str) -> HistoryEvent:
        obj = {
            "kind": "Lease",
            "metadata": {"name": LEASE, "namespace": "ns"},
            "spec": {"holderIdentity": holder},
        }
        return HistoryEvent(seq, "MODIFIED", "Lease", obj, at)

    slow = History("ns", [lease(1, 0.0, "a-0"), lease(2, LEASE_DURATION + RETRY_PERIOD + 1, "b")])
    assert len(list(hand_over_in_time(slow))) == 1
    fast = History("ns", [lease(1, 0.0, "a-0"), lease(2, LEASE_DURATION + 1, "b")])
    assert list(hand_over_in_time(fast)) == []
    released = History("ns", [lease(1, 0.0, "a-0"), lease(2, 5.0, ""), lease(3, 60.0, "b")])
    assert list(hand_over_in_time(released)) == []
