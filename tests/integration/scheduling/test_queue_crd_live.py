"""The Queue CRD (``crdkit/scheduling/queues/crds``) on the real apiserver: it installs and is
Established; a Queue is created, edited and deleted the ways kubectl does it (create, merge
patch, server-side apply, delete) with the defaults coming from the CRD; every bad quota is
refused by the apiserver itself, naming the field; status goes through its subresource and the
printer columns show it.

kubectl is not among the control plane's binaries (``KUBEBUILDER_ASSETS``) nor in the test
kit, so the calls are crdkit's Client sending what kubectl sends: plain JSON, numbers as
numbers, no field the user did not write.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from crdkit.client import Client, GroupVersionKind, Invalid, NotFound, PatchType
from crdkit.resources import (
    Queue,
    QueueCondition,
    QueueFlavorUsage,
    QueueQuota,
    QueueResourceUsage,
    QueueStatus,
    resource_info,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from crdkit.testing import ControlPlane

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

QUEUE_CRD = (
    Path(__file__).parents[3]
    / "python"
    / "crdkit"
    / "scheduling"
    / "queues"
    / "crds"
    / "scheduling.crdkit.io_queues.yaml"
)
CRD = GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
QUEUE = GroupVersionKind("scheduling.crdkit.io", "v1alpha1", "Queue")
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


@pytest.fixture
async def client(scheduling_plane: ControlPlane) -> AsyncIterator[Client]:
    await scheduling_plane.install_crds([QUEUE_CRD])
    async with Client.from_control_plane(scheduling_plane) as client:
        yield client


def queue_name() -> str:
    # Queues are cluster-scoped: every test names its own.
    return f"q-{uuid.uuid4().hex[:10]}"


def manifest(name: str, **spec: Any) -> dict[str, Any]:
    """A Queue as a user writes it in YAML: no weight, no preemption, quotas as numbers."""
    return {
        "apiVersion": "scheduling.crdkit.io/v1alpha1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {
            "parent": "org",
            "flavors": [
                {
                    "name": "h100",
                    "nodeLabels": {"gpu.example.com/model": "h100"},
                    "resources": [
                        {
                            "name": "nvidia.com/gpu",
                            "nominal": 64,
                            "borrowingLimit": 32,
                            "lendingLimit": 16,
                        }
                    ],
                }
            ],
            **spec,
        },
    }


async def test_the_crd_installs_and_is_established(client: Client) -> None:
    stored = await client.get(CRD, "queues.scheduling.crdkit.io")
    conditions = {c["type"]: c["status"] for c in stored["status"]["conditions"]}
    assert conditions["Established"] == "True"
    assert conditions["NamesAccepted"] == "True"
    assert stored["spec"]["scope"] == "Cluster"
    assert stored["status"]["acceptedNames"]["kind"] == "Queue"
    assert await client.list(Queue) is not None  # served


async def test_a_queue_is_created_edited_and_deleted(client: Client) -> None:
    name = queue_name()
    created = await client.create(manifest(name))
    try:
        # The defaults are the apiserver's, from the CRD: the manifest had none of them.
        spec = created["spec"]
        assert spec["weight"] == 1
        assert spec["preemption"] == {"withinQueue": "LowerPriority", "fairShare": False}
        assert spec["enforceMaxRunTime"] is False
        assert spec["flavors"][0]["resources"][0]["nominal"] == 64  # kept as written

        typed = await client.get(Queue, name)
        assert typed.spec.weight == 1
        assert typed.spec.preemption.within_queue == "LowerPriority"
        assert typed.spec.quotas_milli() == {
            "h100": {"nvidia.com/gpu": QueueQuota(64_000, 32_000, 16_000)}
        }

        # kubectl patch --type merge
        patched = await client.patch(
            Queue, name, {"spec": {"weight": 2.5, "preemption": {"withinQueue": "Never"}}}
        )
        assert patched.spec.weight == 2.5
        assert patched.spec.preemption.within_queue == "Never"
        assert patched.spec.preemption.fair_share is False
        assert patched.metadata.generation == 2

        # kubectl apply --server-side by a second manager: the flavor is a map-list entry keyed
        # by name, so applying one resource of h100 adds it beside the creator's, not over it.
        await client.patch(
            QUEUE,
            name,
            {
                "apiVersion": "scheduling.crdkit.io/v1alpha1",
                "kind": "Queue",
                "metadata": {"name": name},
                "spec": {
                    "flavors": [{"name": "h100", "resources": [{"name": "cpu", "nominal": "96"}]}]
                },
            },
            patch_type=PatchType.APPLY,
            field_manager="platform-team",
        )
        applied = await client.get(Queue, name)
        resources = applied.spec.flavors[0].resources
        assert [r.name for r in resources] == ["nvidia.com/gpu", "cpu"]
        assert applied.spec.nominal_milli() == {"nvidia.com/gpu": 64_000, "cpu": 96_000}
        assert applied.spec.weight == 2.5  # left as the merge patch made it

        # kubectl delete
        await client.delete(Queue, name)
        with pytest.raises(NotFound):
            await client.get(Queue, name)
    finally:
        await _delete_quietly(client, name)


def _resource(**fields: Any) -> dict[str, Any]:
    return {"name": "nvidia.com/gpu", "nominal": 8, **fields}


def _flavors(*resources: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": "h100", "resources": list(resources)}]


BAD = {
    # case: (spec fields, the field the apiserver names, what it says)
    "lending-above-nominal": (
        {"flavors": _flavors(_resource(nominal=8, lendingLimit=9))},
        "spec.flavors[0].resources[0].lendingLimit",
        "lendingLimit must not exceed nominal",
    ),
    "lending-above-nominal-as-quantities": (
        {"flavors": _flavors(_resource(nominal="1Gi", lendingLimit="1025Mi"))},
        "spec.flavors[0].resources[0].lendingLimit",
        "lendingLimit must not exceed nominal",
    ),
    "resource-listed-twice": (
        {"flavors": _flavors(_resource(), _resource(nominal=4))},
        "spec.flavors[0].resources[1]",
        "Duplicate value",
    ),
    "flavor-listed-twice": (
        {"flavors": [*_flavors(_resource()), *_flavors(_resource())]},
        "spec.flavors[1]",
        "Duplicate value",
    ),
    "negative-nominal": (
        {"flavors": _flavors(_resource(nominal=-1))},
        "spec.flavors[0].resources[0].nominal",
        "greater than or equal to 0",
    ),
    "negative-borrowing-limit-as-quantity": (
        {"flavors": _flavors(_resource(borrowingLimit="-2Gi"))},
        "spec.flavors[0].resources[0].borrowingLimit",
        "should match",
    ),
    "negative-weight": ({"weight": -1}, "spec.weight", "greater than or equal to 0"),
    "enforce-without-max-run-seconds": (
        {"enforceMaxRunTime": True},
        "spec.enforceMaxRunTime",
        "enforceMaxRunTime needs maxRunSeconds",
    ),
    "unknown-within-queue": (
        {"preemption": {"withinQueue": "Always"}},
        "spec.preemption.withinQueue",
        "Unsupported value",
    ),
}


@pytest.mark.parametrize(("spec", "field", "says"), BAD.values(), ids=BAD.keys())
async def test_a_bad_queue_is_refused_naming_the_field(
    client: Client, spec: dict[str, Any], field: str, says: str
) -> None:
    name = queue_name()
    with pytest.raises(Invalid) as caught:
        await client.create(manifest(name, **spec))
    named = [cause for cause in caught.value.causes if cause.field == field]
    assert named, f"no cause names {field}: {caught.value}"
    assert any(says in cause.message for cause in named), str(caught.value)
    with pytest.raises(NotFound):
        await client.get(Queue, name)


async def test_a_queue_cannot_name_itself_as_parent(client: Client) -> None:
    name = queue_name()
    with pytest.raises(Invalid) as caught:
        await client.create(manifest(name, parent=name))
    assert "spec.parent" in str(caught.value)
    assert "a queue cannot be its own parent" in str(caught.value)


async def test_the_status_is_written_through_its_subresource_and_shows_in_columns(
    client: Client,
) -> None:
    name = queue_name()
    await client.create(manifest(name, weight=2))
    try:
        queue = await client.get(Queue, name)
        queue.status = QueueStatus(
            observed_generation=queue.metadata.generation,
            conditions=[
                QueueCondition(
                    type="Ready",
                    status="True",
                    reason="Admitting",
                    message="",
                    last_transition_time=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
                )
            ],
            flavors=[
                QueueFlavorUsage(
                    name="h100",
                    resources=[
                        QueueResourceUsage(
                            name="nvidia.com/gpu", nominal="64", used="72", borrowed="8"
                        )
                    ],
                )
            ],
            weighted_share=0.25,
            pending_gangs=3,
            admitted_gangs=5,
        )
        await client.replace_status(queue)

        # Status written with the object itself is dropped: it has a subresource of its own.
        await client.patch(Queue, name, {"status": {"pendingGangs": 99}})
        stored = await client.get(Queue, name)
        assert stored.status is not None
        assert stored.status.pending_gangs == 3
        assert stored.status.flavors[0].resources[0].used == "72"
        assert stored.status.flavors[0].resources[0].lent == "0"  # the CRD's default
        assert stored.status.conditions[0].type == "Ready"
        assert stored.metadata.generation == 1  # a status write is no spec change

        # kubectl get queues: the printer columns
        path = resource_info(Queue).path(name=name)
        table = json.loads(await client.transport.request("GET", path, accept=TABLE))
        columns = [column["name"] for column in table["columnDefinitions"]]
        assert columns == ["Name", "Parent", "Weight", "Pending", "Admitted", "Share", "Age"]
        (row,) = table["rows"]
        assert row["cells"][:6] == [name, "org", 2, 3, 5, 0.25]
    finally:
        await _delete_quietly(client, name)


async def _delete_quietly(client: Client, name: str) -> None:
    with contextlib.suppress(NotFound):  # deleted by the test already
        await client.delete(Queue, name)
