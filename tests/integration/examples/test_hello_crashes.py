"""The hello example under crashes: every write of a small scenario (two Hellos, one's greeting
changed, the other deleted) explored with every fault kind, on FakeCluster and a virtual
clock (nothing the example does depends on the real apiserver's behaviour but garbage
collection, which FakeCluster does too).

Oracles: the kit's (end state as the fault-free run's, no recreation, no orphans, no duplicate
children) and what the example promises: each Hello has exactly one greeting ConfigMap, made
by it and carrying its message; a Hello that is at rest is Ready for the generation it has,
with the message of its spec.

Rerun one case::

    pytest tests/integration/examples/test_hello_crashes.py --crash-case=kill-after:3
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import pytest
from examples.hello.operator import Hello, HelloReconciler, HelloSpec, HelloStatus

from _crash_operators import wait_until
from _hello import hello_greeted
from crdkit.client import Client, NotFound
from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.runtime import Manager
from crdkit.testing import run_on_virtual_clock
from crdkit.testing.crashes import (
    FAULT_KINDS,
    CrashExplorer,
    FakeClusterSite,
    History,
    Scenario,
)
from crdkit.testing.sim.managers import virtual_clock_manager

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


def hello_operator(
    client: Client, namespace: str, reconciler: type[HelloReconciler] = HelloReconciler
) -> Manager:
    """The example as ``crdkit run examples.hello.operator:HelloReconciler`` would run it."""
    manager = virtual_clock_manager(client, namespace=namespace)
    manager.add(reconciler())
    return manager


async def hello_workload(client: Client, namespace: str) -> None:
    """Two Hellos; once both are greeted, ``world`` says Bonjour and ``moon`` goes."""
    for name in ("world", "moon"):
        spec = HelloSpec(target=name)
        await client.create(Hello(metadata=ObjectMeta(name=name, namespace=namespace), spec=spec))
    for name, message in (("world", "Hello, world!"), ("moon", "Hello, moon!")):
        await wait_until(
            lambda n=name, m=message: hello_greeted(client, namespace, m, name=n),
            300,
            f"{name} greeted",
        )
    await client.patch(Hello, "world", {"spec": {"greeting": "Bonjour"}}, namespace=namespace)
    await wait_until(
        lambda: hello_greeted(
            client, namespace, "Bonjour, world!", name="world", generation_observed=True
        ),
        300,
        "world greeted in French",
    )
    await client.delete(Hello, "moon", namespace=namespace)

    async def moon_gone() -> bool:
        try:
            await client.get(Hello, "moon", namespace=namespace)
        except NotFound:
            return True
        return False

    await wait_until(moon_gone, 300, "moon deleted")


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def one_greeting_per_hello(history: History) -> Iterable[str]:
    """Never two live ConfigMaps controlled by one Hello; at the end every Hello has exactly
    one, named ``<hello>-greeting``, controlled by it (its uid), with its message."""
    live: dict[tuple[str, str | None, str], dict[str, Any]] = {}
    for event in history.events:
        if event.type == "DELETED":
            live.pop(event.key, None)
        else:
            live[event.key] = event.obj
        if event.kind != "ConfigMap":
            continue
        owners = [
            ref["uid"]
            for obj in live.values()
            if obj.get("kind") == "ConfigMap"
            for ref in _meta(obj).get("ownerReferences") or []
            if ref.get("kind") == "Hello" and ref.get("controller")
        ]
        for uid in {u for u in owners if owners.count(u) > 1}:
            yield f"after event {event.seq}: {owners.count(uid)} live ConfigMaps of Hello {uid}"
    hellos = [o for o in history.end_state if o.get("kind") == "Hello"]
    maps = {_meta(o).get("name"): o for o in history.end_state if o.get("kind") == "ConfigMap"}
    for hello in hellos:
        name, spec = _meta(hello).get("name"), hello.get("spec") or {}
        cm = maps.get(f"{name}-greeting")
        if cm is None:
            yield f"Hello {name} has no greeting ConfigMap at the end"
            continue
        refs = [r for r in _meta(cm).get("ownerReferences") or [] if r.get("controller")]
        if [r.get("uid") for r in refs] != [_meta(hello).get("uid")]:
            yield f"{name}-greeting is not controlled by Hello {name}: {refs}"
        message = f"{spec.get('greeting', 'Hello')}, {spec.get('target')}!"
        if (cm.get("data") or {}).get("message") != message:
            yield f"{name}-greeting says {cm.get('data')}, not {message!r}"
    hello_uids = {_meta(h).get("uid") for h in hellos}
    for name, cm in maps.items():
        if not any(r.get("uid") in hello_uids for r in _meta(cm).get("ownerReferences") or []):
            yield f"ConfigMap {name} outlives its Hello"


def status_reflects_generation(history: History) -> Iterable[str]:
    """At the end each Hello is Ready for its own generation, with its spec's message."""
    for hello in history.end_state:
        if hello.get("kind") != "Hello":
            continue
        metadata, spec = _meta(hello), hello.get("spec") or {}
        status = hello.get("status") or {}
        if status.get("observedGeneration") != metadata.get("generation"):
            yield (
                f"Hello {metadata.get('name')}: observedGeneration "
                f"{status.get('observedGeneration')} for generation {metadata.get('generation')}"
            )
        message = f"{spec.get('greeting', 'Hello')}, {spec.get('target')}!"
        ready = [c for c in status.get("conditions") or [] if c.get("type") == "Ready"]
        if [(c.get("status"), c.get("message")) for c in ready] != [("True", message)]:
            yield f"Hello {metadata.get('name')}: Ready conditions {ready}, not True {message!r}"


def hello_scenario() -> Scenario:
    return Scenario(
        operator=hello_operator,
        workload=hello_workload,
        kinds=[Hello, ConfigMap],
        invariants=[one_greeting_per_hello, status_reflects_generation],
    )


def test_hello_survives_a_crash_at_every_write() -> None:
    explorer = CrashExplorer(hello_scenario(), FakeClusterSite([Hello]))
    report = run_on_virtual_clock(explorer.check())
    print(report.summary())
    if explorer.cases is None:  # the whole plan, not a --crash-case rerun
        counts = report.by_kind()
        assert set(counts) == set(FAULT_KINDS)
        writes = [str(w) for w in report.baseline.writes]
        # Two greetings made, two statuses, a changed greeting and its status at least.
        assert sum(w.startswith("patch configmaps") for w in writes) >= 3, writes
        assert sum("hellos.hello.example.com/status" in w for w in writes) >= 3, writes
        # Every kill and lost answer met its write.
        for kind in ("kill-before", "kill-after", "lost-response", "stale"):
            assert counts[kind]["not reached"] == 0, report.summary()


class StatusFirstHello(HelloReconciler):
    """A broken variant, to show the scenario's oracles can fail: it records the generation
    as done before applying the ConfigMap, and skips a Hello whose status says done."""

    async def reconcile(self, ctx: Any, obj: Hello) -> None:
        if obj.status is not None and obj.status.observed_generation == obj.metadata.generation:
            return
        await ctx.update_status(
            obj,
            lambda hello: setattr(
                hello, "status", HelloStatus(observed_generation=hello.metadata.generation)
            ),
        )
        await super().reconcile(ctx, obj)


def test_a_hello_that_marks_done_before_its_configmap_is_caught_by_a_kill() -> None:
    scenario = hello_scenario()
    scenario.operator = functools.partial(hello_operator, reconciler=StatusFirstHello)
    scenario.invariants = [one_greeting_per_hello]
    explorer = CrashExplorer(
        scenario, FakeClusterSite([Hello]), faults=("kill-after",), cases=["kill-after:1"]
    )
    report = run_on_virtual_clock(explorer.explore())
    [failure] = report.failures
    assert str(failure.write) == "update hellos.hello.example.com/status crash/world"
    assert any("world has no greeting ConfigMap" in p for p in failure.problems), failure.problems
