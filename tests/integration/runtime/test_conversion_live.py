"""A conversion webhook served by the Manager, called by the real apiserver: an object stored
in v1 (the hub) is read in v2, changed in v2 and read back in v1, and one created in v2 is
stored as v1; the Manager points the CRD's conversion stanza at itself (development)."""

from __future__ import annotations

import asyncio

import pytest
from _runtime_support import new_manager
from examples.conversion.boxes import BOX_CONVERSION, BoxV1, BoxV2

from crdkit.client import Client, DecodeError, GroupVersionKind, PatchType
from crdkit.crd import build_crd
from crdkit.resources import resource_info
from crdkit.testing import ControlPlane, eventually

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

CRD = GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")


def _v1(namespace: str, name: str, image: str, replicas: int = 1) -> BoxV1:
    return BoxV1.model_validate(
        {
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"image": image, "replicas": replicas},
        }
    )


async def test_versions_convert_through_the_webhook(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str
) -> None:
    await control_plane.install_crds([build_crd([BoxV1, BoxV2])])
    crd_name = f"{resource_info(BoxV1).plural}.{resource_info(BoxV1).group}"
    manager = new_manager(
        crdkit_client,
        namespace,
        webhook_bind_address="127.0.0.1:0",
        webhook_install=f"boxes-{namespace}",
    )
    manager.add_conversion(BOX_CONVERSION)
    task = asyncio.create_task(manager.run())
    try:
        await crdkit_client.create(_v1(namespace, "one", "nginx:1.25", replicas=2))

        async def converted() -> bool:
            if task.done():
                task.result()
            try:
                box = await crdkit_client.get(BoxV2, "one", namespace=namespace)
            except DecodeError:
                return False  # not yet: the apiserver still serves v1's fields as v2
            return box.spec.container.repository == "nginx"

        await eventually(converted, what="v2 read through the webhook")
        v2 = await crdkit_client.get(BoxV2, "one", namespace=namespace)
        assert (v2.spec.container.tag, v2.spec.scale.replicas) == ("1.25", 2)

        v2.spec.container.tag = "1.26"
        await crdkit_client.replace(v2)
        v1 = await crdkit_client.get(BoxV1, "one", namespace=namespace)
        assert v1.spec.image == "nginx:1.26"
        assert v1.spec.replicas == 2

        made = BOX_CONVERSION.convert(_v1(namespace, "two", "redis"), BoxV2)
        await crdkit_client.create(made)
        assert (await crdkit_client.get(BoxV1, "two", namespace=namespace)).spec.image == "redis"
        listed = await crdkit_client.list(BoxV2, namespace=namespace)
        assert sorted((b.metadata.name, b.spec.container.tag) for b in listed.items) == [
            ("one", "1.26"),
            ("two", None),
        ]
        assert manager.webhook_runner is not None
        assert manager.webhook_runner.server is not None
        assert manager.webhook_runner.server.requests > 0
    finally:
        manager.stop()
        await asyncio.wait_for(task, 60)
        await crdkit_client.patch(
            CRD,
            crd_name,
            {"spec": {"conversion": {"strategy": "None", "webhook": None}}},
            patch_type=PatchType.MERGE,
        )
