"""A kind with a validator and a defaulter that record what they were called with, and a
manager serving them to the real apiserver (imported by module name by pytest)."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crdkit import ApiModel, CustomResource, Manager
from crdkit._pki import CertificateAuthority, write_cert, write_key
from crdkit.client import Client, GroupVersionKind, NotFound
from crdkit.runtime import AdmissionContext, Defaulter, Denied, MatchCondition, Validator, Webhook
from crdkit.testing import ControlPlane, eventually


class GadgetSpec(ApiModel):
    size: int = 1
    color: str | None = None
    label: str | None = None


class Gadget(CustomResource, group="webhooks.crdkit.test", version="v1", kind="Gadget"):
    spec: GadgetSpec


@dataclass
class Calls:
    """(operation, name, dry_run) of each call, by the validator and the defaulter."""

    validated: list[tuple[str, str, bool]] = field(default_factory=list)
    defaulted: list[tuple[str, str, bool]] = field(default_factory=list)


class GadgetValidator(Validator[Gadget]):
    def __init__(self, calls: Calls) -> None:
        self.calls = calls

    async def validate_create(self, ctx: AdmissionContext, obj: Gadget) -> list[str] | None:
        self.calls.validated.append((ctx.operation, ctx.name, ctx.dry_run))
        if obj.spec.label == "crash":
            raise RuntimeError("the validator has a bug")
        if obj.spec.size > 10:
            raise Denied(f"spec.size must be at most 10, got {obj.spec.size}")
        return ["size 7 is unlucky"] if obj.spec.size == 7 else None

    async def validate_update(
        self, ctx: AdmissionContext, old: Gadget, new: Gadget
    ) -> list[str] | None:
        self.calls.validated.append((ctx.operation, ctx.name, ctx.dry_run))
        if new.spec.size < old.spec.size:
            raise ValueError(f"spec.size cannot shrink ({old.spec.size} to {new.spec.size})")
        return None


class GadgetDefaulter(Defaulter[Gadget]):
    def __init__(self, calls: Calls) -> None:
        self.calls = calls

    async def default(self, ctx: AdmissionContext, obj: Gadget) -> None:
        self.calls.defaulted.append((ctx.operation, ctx.name, ctx.dry_run))
        if obj.spec.color is None:
            obj.spec.color = "blue"
        obj.metadata.labels = {**(obj.metadata.labels or {}), "defaulted": "yes"}


def gadget(namespace: str, name: str, **spec: Any) -> Gadget:
    return Gadget.model_validate({"metadata": {"name": name, "namespace": namespace}, "spec": spec})


def gadget_webhook(namespace: str, calls: Calls) -> Webhook[Gadget]:
    # The configurations are cluster-wide: a match condition keeps each test's webhooks to its
    # own namespace, so that tests never call each other's servers.
    return Webhook(
        Gadget,
        validator=GadgetValidator(calls),
        defaulter=GadgetDefaulter(calls),
        match_conditions=(
            MatchCondition("this-test", f"request.namespace == {namespace!r}".replace("'", '"')),
        ),
    )


async def delete_configurations(client: Client, name: str) -> None:
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        with contextlib.suppress(NotFound):
            await client.delete(GroupVersionKind("admissionregistration.k8s.io", "v1", kind), name)


def gadgets_path(namespace: str) -> str:
    return f"/apis/webhooks.crdkit.test/v1/namespaces/{namespace}/gadgets"


async def webhooks_active(plane: ControlPlane, namespace: str) -> bool:
    """Whether the apiserver calls both webhooks yet (it loads new configurations on its own
    schedule): a dry-run create too big is refused, and one that passes comes back defaulted."""
    path = gadgets_path(namespace) + "?dryRun=All"
    status, _, _ = await admin_post(plane, path, gadget(namespace, "probe", size=11).to_dict())
    if status != 403:
        return False
    status, _, body = await admin_post(plane, path, gadget(namespace, "probe").to_dict())
    return status == 201 and body["spec"].get("color") == "blue"


@contextlib.asynccontextmanager
async def serving(manager: Manager) -> AsyncIterator[Manager]:
    task = asyncio.create_task(manager.run())
    try:

        async def ready() -> bool:
            if task.done():
                task.result()
                raise AssertionError("manager stopped before it was ready")
            return manager.ready

        await eventually(ready, what="manager ready")
        yield manager
    finally:
        manager.stop()
        await asyncio.wait_for(task, 60)


def issue_pair(ca: CertificateAuthority, directory: Path) -> int:
    """Write a new serving pair from ``ca`` as ``tls.crt``/``tls.key`` the way the kubelet
    updates a mounted Secret: a fresh data directory, then one atomic swap of the ``..data``
    symlink the file links go through. Returns the new certificate's serial number."""
    import os
    import uuid

    cert, key = ca.serving("gadget-webhook", ["127.0.0.1"])
    data = directory / f"..{uuid.uuid4().hex}"
    data.mkdir()
    write_cert(data / "tls.crt", cert)
    write_key(data / "tls.key", key)
    write_cert(data / "ca.crt", ca.cert)
    link = directory / "..data_tmp"
    link.symlink_to(data.name)
    os.replace(link, directory / "..data")
    for name in ("tls.crt", "tls.key", "ca.crt"):
        if not (directory / name).is_symlink():
            (directory / name).symlink_to(f"..data/{name}")
    return int(cert.serial_number)


async def served_serial(port: int, ca_file: Path) -> int:
    """The serial number of the certificate a fresh TLS handshake with 127.0.0.1:port meets."""
    from cryptography import x509

    context = ssl.create_default_context(cafile=str(ca_file))
    _reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
    try:
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
    return int(x509.load_der_x509_certificate(der).serial_number)


async def admin_post(
    plane: ControlPlane, path: str, body: dict[str, Any]
) -> tuple[int, list[str], dict[str, Any]]:
    """POST as the admin with aiohttp directly, for what the crdkit client does not return:
    (status, the Warning headers, the body)."""
    import aiohttp

    context = ssl.create_default_context(cafile=str(plane.ca_file))
    context.load_cert_chain(plane.client_cert_file, plane.client_key_file)
    async with (
        aiohttp.ClientSession() as session,
        session.post(plane.server_url + path, json=body, ssl=context) as response,
    ):
        return response.status, response.headers.getall("Warning", []), await response.json()
