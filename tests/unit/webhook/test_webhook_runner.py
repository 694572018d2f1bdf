"""The Manager's webhooks: registered from a reconciler's ``webhooks`` or ``add_webhook`` (one
per kind), served with a self-signed certificate whose directory goes away on close, advertised
at loopback; and a manager without webhooks never imports the server, ssl certificates or
cryptography."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from crdkit import Context, CustomResource, Manager, ManagerOptions, MetricsOptions, Reconciler
from crdkit.client import Client, ClientConfig
from crdkit.runtime import (
    AdmissionContext,
    Conversion,
    Validator,
    Webhook,
    WebhookServerOptions,
)
from crdkit.testing import FakeCluster
from crdkit.webhook.runner import WebhookRunner


class Lamp(CustomResource, group="lights.example.com", version="v1", kind="Lamp"):
    pass


class LampValidator(Validator[Lamp]):
    async def validate_create(self, ctx: AdmissionContext, obj: Lamp) -> list[str] | None:
        return None


LAMP_WEBHOOK = Webhook(Lamp, validator=LampValidator())


class LampV2(Lamp, version="v2"):
    def to_hub(self) -> Lamp:
        return Lamp(metadata=self.metadata)

    @classmethod
    def from_hub(cls, hub: Lamp) -> LampV2:
        return cls(metadata=hub.metadata)


LAMP_CONVERSION = Conversion(hub=Lamp, spokes=(LampV2,))


class LampReconciler(Reconciler[Lamp]):
    webhooks = (LAMP_WEBHOOK,)
    conversions = (LAMP_CONVERSION,)

    async def reconcile(self, ctx: Context, obj: Lamp) -> None:
        return None


def _manager(**options: Any) -> Manager:
    client = Client(ClientConfig(server="https://127.0.0.1:1"))
    return Manager(client, metrics_bind_address="0", health_probe_bind_address="0", **options)


def test_a_reconcilers_webhooks_are_served_and_one_per_kind() -> None:
    manager = _manager()
    manager.add(LampReconciler())
    assert manager.webhooks == [LAMP_WEBHOOK]
    assert manager.conversions == [LAMP_CONVERSION]
    with pytest.raises(ValueError, match=r"a webhook for Lamp \(lights.example.com/v1\)"):
        manager.add_webhook(Webhook(Lamp, validator=LampValidator()))
    with pytest.raises(ValueError, match="a conversion for Lamp is already added"):
        manager.add_conversion(Conversion(hub=Lamp, spokes=(LampV2,)))


def test_a_bad_webhook_address_is_named() -> None:
    with pytest.raises(ValueError, match="webhook_bind_address"):
        _manager(webhook_bind_address="9443")


async def test_a_self_signed_runner_serves_and_cleans_up() -> None:
    runner = WebhookRunner(
        [LAMP_WEBHOOK], WebhookServerOptions(bind_address="127.0.0.1:0", hosts=("127.0.0.1",))
    )
    client = Client(ClientConfig(server="https://127.0.0.1:1"))  # not called without install
    await runner.start(client)
    assert runner.certs is not None
    directory = runner.certs.cert_path.parent
    try:
        assert runner.ca_bundle == (directory / "ca.crt").read_bytes()
        assert runner.advertised_url() == f"https://127.0.0.1:{runner.port}"
    finally:
        await runner.close()
    assert not directory.exists()


@dataclass(frozen=True)
class _Told:
    """Options of the runner's own shape, not the runtime's class: any object with the fields
    will do."""

    bind_address: str = "127.0.0.1:0"
    cert_dir: Path | None = None
    hosts: tuple[str, ...] = ("localhost",)
    install: str | None = None
    url: str | None = "https://webhooks.example.com:8443"


def test_the_runner_reads_whatever_options_it_is_told() -> None:
    told = _Told()
    runner = WebhookRunner([LAMP_WEBHOOK], told)
    assert runner.options is told
    assert runner.address == ("127.0.0.1", 0)
    assert runner.advertised_url() == "https://webhooks.example.com:8443"


@pytest.mark.parametrize("address", ["0", "9443", "host:port"])
def test_a_runner_refuses_an_address_it_cannot_serve_on(address: str) -> None:
    with pytest.raises(ValueError, match="webhook_bind_address"):
        WebhookRunner([LAMP_WEBHOOK], _Told(bind_address=address))


async def test_a_running_manager_hands_the_runner_its_webhook_group_whole() -> None:
    webhook = WebhookServerOptions(bind_address="127.0.0.1:0", hosts=("127.0.0.1",))
    options = ManagerOptions(
        metrics=MetricsOptions(bind_address="0"), health_probe_bind_address="0", webhook=webhook
    )
    async with FakeCluster().client() as client:
        manager = Manager(client, options, registry=CollectorRegistry())
        manager.add_webhook(LAMP_WEBHOOK)
        running = asyncio.create_task(manager.run())
        try:
            await asyncio.wait_for(manager.wait_ready(), 30)
            assert manager.webhook_runner is not None
            assert manager.webhook_runner.options is webhook
            assert manager.webhook_port > 0
            assert manager.webhook_ca_bundle is not None
        finally:
            manager.stop()
            await asyncio.wait_for(running, 30)


def test_a_manager_without_webhooks_does_not_load_them() -> None:
    probe = "import crdkit.runtime.manager, json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    modules = set(json.loads(out))
    for heavy in (
        "crdkit.webhook.server",
        "crdkit.webhook.certs",
        "crdkit._pki",
        "cryptography",
    ):
        assert heavy not in modules
