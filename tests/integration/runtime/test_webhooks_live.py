"""Admission webhooks served by the Manager, called by the real apiserver: a refusal carries the
validator's message, a default is applied, warnings come back in the Warning header, dry-run
reaches the user's code, a crash is a clear refusal; and no create is lost while the serving
certificate is rotated or the server is replaced (failurePolicy Fail: a lost call is a failed
create)."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from pathlib import Path

import pytest
import yaml
from _runtime_support import new_manager
from _webhook_support import (
    Calls,
    Gadget,
    admin_post,
    delete_configurations,
    gadget,
    gadget_webhook,
    gadgets_path,
    issue_pair,
    served_serial,
    serving,
    webhooks_active,
)

from crdkit import Manager
from crdkit._pki import CertificateAuthority
from crdkit.client import ApiError, Client
from crdkit.crd import build_crd
from crdkit.testing import ControlPlane, eventually

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


@pytest.fixture
async def gadget_crd(control_plane: ControlPlane) -> None:
    await control_plane.install_crds([build_crd([Gadget])])


def _manager(client: Client, namespace: str, calls: Calls, **options: object) -> Manager:
    settings: dict[str, object] = {
        "webhook_bind_address": "127.0.0.1:0",
        "webhook_install": f"gadgets-{namespace}",
        **options,
    }
    manager = new_manager(client, namespace, **settings)
    manager.add_webhook(gadget_webhook(namespace, calls))
    return manager


async def test_admission_on_the_apiserver(
    control_plane: ControlPlane,
    crdkit_client: Client,
    namespace: str,
    gadget_crd: None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = Calls()
    manager = _manager(crdkit_client, namespace, calls)
    try:
        async with serving(manager):
            await eventually(
                lambda: webhooks_active(control_plane, namespace), what="webhooks active"
            )

            # Refused with the validator's message, as kubectl would show it.
            with pytest.raises(ApiError) as refused:
                await crdkit_client.create(gadget(namespace, "big", size=12))
            assert refused.value.code == 403
            assert "spec.size must be at most 10, got 12" in str(refused.value)

            # Defaulted: a field the user left out and a label, as stored.
            created = await crdkit_client.create(gadget(namespace, "plain"))
            assert created.spec.color == "blue"
            assert created.metadata.labels == {"defaulted": "yes"}
            kept = await crdkit_client.create(gadget(namespace, "red", color="red"))
            assert kept.spec.color == "red"

            # Warnings in the Warning header; the object is created.
            status, warnings, _ = await admin_post(
                control_plane, gadgets_path(namespace), gadget(namespace, "seven", size=7).to_dict()
            )
            assert status == 201
            assert any("size 7 is unlucky" in w for w in warnings), warnings

            # Dry-run reaches both as dry-run, and nothing is stored.
            status, _, body = await admin_post(
                control_plane,
                gadgets_path(namespace) + "?dryRun=All",
                gadget(namespace, "dry").to_dict(),
            )
            assert status == 201
            assert body["spec"]["color"] == "blue"
            assert ("CREATE", "dry", True) in calls.validated
            assert ("CREATE", "dry", True) in calls.defaulted
            assert ("CREATE", "plain", False) in calls.validated
            names = {
                g.metadata.name
                for g in (await crdkit_client.list(Gadget, namespace=namespace)).items
            }
            assert "dry" not in names
            assert "plain" in names

            # An update the validator refuses with a ValueError: 422 and its message.
            created.spec.size = 0
            with pytest.raises(ApiError) as shrunk:
                await crdkit_client.replace(created)
            assert "spec.size cannot shrink (1 to 0)" in str(shrunk.value)
            assert ("UPDATE", "plain", False) in calls.validated

            # A crash in the validator: refused with a clear message, logged, server still up.
            with (
                caplog.at_level(logging.ERROR, logger="crdkit.webhook.admission"),
                pytest.raises(ApiError) as crashed,
            ):
                await crdkit_client.create(gadget(namespace, "buggy", label="crash"))
            assert "the webhook failed (RuntimeError: the validator has a bug)" in str(
                crashed.value
            )
            assert any("buggy" in r.getMessage() for r in caplog.records)
            assert (await crdkit_client.create(gadget(namespace, "after"))).spec.color == "blue"
    finally:
        await delete_configurations(crdkit_client, f"gadgets-{namespace}")


async def _create_stream(
    client: Client, namespace: str, prefix: str, count: int, done: asyncio.Event | None = None
) -> int:
    """Create ``count`` gadgets one after another (until ``done`` too); how many succeeded."""
    made = 0
    index = 0
    while index < count or (done is not None and not done.is_set()):
        await client.create(gadget(namespace, f"{prefix}-{index}"))
        made += 1
        index += 1
    return made


async def test_certificate_rotation_loses_no_request(
    control_plane: ControlPlane,
    crdkit_client: Client,
    namespace: str,
    gadget_crd: None,
    tmp_path: Path,
) -> None:
    ca = CertificateAuthority("gadget-ca", validity=dt.timedelta(days=1))
    certs = tmp_path / "certs"
    certs.mkdir()
    serials = [issue_pair(ca, certs)]
    calls = Calls()
    manager = _manager(crdkit_client, namespace, calls, webhook_cert_dir=certs)
    try:
        async with serving(manager):
            await eventually(
                lambda: webhooks_active(control_plane, namespace), what="webhooks active"
            )
            port = manager.webhook_port
            assert await served_serial(port, certs / "ca.crt") == serials[0]
            done = asyncio.Event()
            writers = [
                asyncio.create_task(_create_stream(crdkit_client, namespace, f"w{i}", 10, done))
                for i in range(3)
            ]
            for _ in range(4):
                serials.append(issue_pair(ca, certs))
                # The first handshake after the swap already meets the new certificate.
                assert await served_serial(port, certs / "ca.crt") == serials[-1]
                await asyncio.sleep(0)
            done.set()
            made = sum(await asyncio.gather(*writers))
            listed = await crdkit_client.list(Gadget, namespace=namespace)
            stream = [g for g in listed.items if (g.metadata.name or "").startswith("w")]
            assert len(stream) == made >= 30
            assert all(g.spec.color == "blue" for g in stream)
            assert manager.webhook_runner is not None
            assert manager.webhook_runner.certs is not None
            assert manager.webhook_runner.certs.reloads == 4
    finally:
        await delete_configurations(crdkit_client, f"gadgets-{namespace}")


async def test_replacing_the_server_loses_no_request(
    control_plane: ControlPlane,
    crdkit_client: Client,
    namespace: str,
    gadget_crd: None,
    tmp_path: Path,
) -> None:
    """A new manager listens on the port (SO_REUSEPORT) before the old one stops, as a restart
    of the webhook server does; creates running through both never fail."""
    ca = CertificateAuthority("gadget-ca", validity=dt.timedelta(days=1))
    certs = tmp_path / "certs"
    certs.mkdir()
    issue_pair(ca, certs)
    old_calls, new_calls = Calls(), Calls()
    old = _manager(crdkit_client, namespace, old_calls, webhook_cert_dir=certs)
    old_run = asyncio.create_task(old.run())
    writers: list[asyncio.Task[int]] = []
    try:
        await eventually(lambda: webhooks_active(control_plane, namespace), what="webhooks active")
        done = asyncio.Event()
        writers = [
            asyncio.create_task(_create_stream(crdkit_client, namespace, f"r{i}", 5, done))
            for i in range(3)
        ]
        await eventually(lambda: _answered(old_calls, "r", 3), what="the old server answers")
        new = _manager(
            crdkit_client,
            namespace,
            new_calls,
            webhook_cert_dir=certs,
            webhook_bind_address=f"127.0.0.1:{old.webhook_port}",
        )
        async with serving(new):
            await eventually(lambda: _answered(new_calls, "r", 1), what="the new server answers")
            old.stop()  # graceful: stops listening, lets the calls in flight finish
            await asyncio.wait_for(old_run, 60)
            answered = len(new_calls.validated)
            await eventually(
                lambda: _answered(new_calls, "r", answered + 10),
                what="the new server alone answers",
            )
            done.set()
            made = sum(await asyncio.gather(*writers))
        listed = await crdkit_client.list(Gadget, namespace=namespace)
        stream = [g for g in listed.items if (g.metadata.name or "").startswith("r")]
        assert len(stream) == made >= 15
        assert all(g.spec.color == "blue" for g in stream)
    finally:
        for writer in writers:
            writer.cancel()
        old.stop()
        await asyncio.gather(old_run, *writers, return_exceptions=True)
        await delete_configurations(crdkit_client, f"gadgets-{namespace}")


async def _answered(calls: Calls, prefix: str, at_least: int) -> bool:
    return sum(1 for _, name, _ in calls.validated if name.startswith(prefix)) >= at_least


async def test_the_generated_configurations_are_accepted(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    """What ``crdkit gen-webhooks`` writes passes the apiserver's strict validation (a dry-run
    create: nothing is installed)."""
    from click.testing import CliRunner

    from crdkit.cli import main
    from crdkit.webhook.certs import write_self_signed

    write_self_signed(tmp_path, ["hello-webhook.hello-system.svc"])
    result = CliRunner().invoke(
        main,
        [
            "gen-webhooks",
            "examples.hello.webhooks:HelloWebhookReconciler",
            "--name",
            "hello-generated",
            "--service-name",
            "hello-webhook",
            "--service-namespace",
            "hello-system",
            "--ca-bundle",
            str(tmp_path / "ca.crt"),
        ],
    )
    assert result.exit_code == 0, result.output
    documents = list(yaml.safe_load_all(result.output))
    assert [d["kind"] for d in documents] == [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ]
    for document in documents:
        plural = document["kind"].lower() + "s"
        status, _, body = await admin_post(
            control_plane,
            f"/apis/admissionregistration.k8s.io/v1/{plural}?dryRun=All&fieldValidation=Strict",
            document,
        )
        assert status == 201, body
        assert body["webhooks"][0]["clientConfig"]["service"]["name"] == "hello-webhook"
