"""Webhook certificates under crashes, on the real apiserver.

What of the webhook's TLS writes to the API: a serving pair from a mounted directory is
reloaded from the files at each handshake (no API write: nothing for a crash to cut short);
the development mode (``webhook_install``) makes a new CA at every start and server-side
applies the webhook configurations with it as ``caBundle`` once serving. A restarted operator
is a rotation: a new CA, a new port. So every write of that mode is explored, with every
fault kind: after a crash at any of them, the configurations must point at the server that
runs, with its CA: the run comes to rest only once the apiserver itself calls both webhooks
through them (a dry-run create refused by the validator and one defaulted by the defaulter),
and the Gadgets made meanwhile are admitted and defaulted as in the fault-free run.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from _runtime_support import new_manager
from _webhook_support import Calls, Gadget, gadget, gadget_webhook, webhooks_active

from crdkit.client import Client, GroupVersionKind, NotFound
from crdkit.crd import build_crd
from crdkit.runtime import Manager
from crdkit.testing import ControlPlane
from crdkit.testing.crashes import FAULT_KINDS, ControlPlaneSite, CrashExplorer, Scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

PREFIX = "crashhook"
KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")


def operator(client: Client, namespace: str) -> Manager:
    manager = new_manager(
        client,
        namespace,
        webhook_bind_address="127.0.0.1:0",
        # One name for every run (they run one after another), so that a write is named alike
        # in each: the faults find their writes by name.
        webhook_install=f"{PREFIX}-gadgets",
    )
    manager.add_webhook(gadget_webhook(namespace, Calls()))
    return manager


def scenario(plane: ControlPlane) -> Scenario:
    async def admitted(client: Client, namespace: str) -> bool:
        return await webhooks_active(plane, namespace)

    async def workload(client: Client, namespace: str) -> None:
        for name in ("g0", "g1"):
            while True:  # until the apiserver calls the webhooks (a crash may come first)
                if await webhooks_active(plane, namespace):
                    with contextlib.suppress(Exception):
                        await client.create(gadget(namespace, name, size=3))
                        break
                await __import__("asyncio").sleep(0.2)

    return Scenario(
        operator=operator,
        workload=workload,
        kinds=[Gadget],
        settle=1.0,
        timeout=120.0,
        quiet=admitted,
    )


async def _delete_configurations(client: Client) -> None:
    for kind in KINDS:
        gvk = GroupVersionKind("admissionregistration.k8s.io", "v1", kind)
        listed: Any = await client.list(gvk)
        for item in listed.items:
            name = str((item.get("metadata") or {}).get("name", ""))
            if name.startswith(f"{PREFIX}-"):
                with contextlib.suppress(NotFound):
                    await client.delete(gvk, name)


async def test_webhook_configurations_follow_a_restarted_server_at_every_write(
    control_plane: ControlPlane,
) -> None:
    await control_plane.install_crds([build_crd([Gadget])])
    explorer = CrashExplorer(
        scenario(control_plane), ControlPlaneSite(control_plane, prefix=PREFIX)
    )
    try:
        report = await explorer.check()
    finally:
        async with Client.from_control_plane(control_plane) as client:
            await _delete_configurations(client)
    print(report.summary())
    if explorer.cases is None:
        writes = [str(w) for w in report.baseline.writes]
        assert any("validatingwebhookconfigurations" in w for w in writes), writes
        assert any("mutatingwebhookconfigurations" in w for w in writes), writes
        counts = report.by_kind()
        assert set(counts) == set(FAULT_KINDS)
        for kind in ("kill-before", "kill-after", "lost-response", "stale"):
            assert counts[kind]["not reached"] == 0, report.summary()


async def test_a_lost_answer_of_a_configuration_apply_does_not_fail_the_start(
    control_plane: ControlPlane,
) -> None:
    # lost-response:1: the manager's start failed on one reset connection (the operator
    # crash-looped); the install now sends its idempotent applies again.
    await control_plane.install_crds([build_crd([Gadget])])
    explorer = CrashExplorer(
        scenario(control_plane),
        ControlPlaneSite(control_plane, prefix=PREFIX),
        cases=["lost-response:1"],
    )
    try:
        report = await explorer.check()
    finally:
        async with Client.from_control_plane(control_plane) as client:
            await _delete_configurations(client)
    assert [r.outcome for r in report.results] == ["passed"]
