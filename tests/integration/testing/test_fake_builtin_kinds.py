"""The fake's table of built-in kind behaviour, measured against the real apiserver.

For every built-in kind the fake serves: does a new object get ``generation``, does the main
resource ignore a status change (a status subresource), and does a delete answer with the
object or a bare Status? The fake's answers must be the apiserver's.
"""

from __future__ import annotations

from typing import Any

import pytest

from crdkit.client import Client, GroupVersionKind
from crdkit.testing import FakeCluster
from crdkit.testing.fake.kinds import BUILTIN_KINDS

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

CONTAINERS = [{"name": "c", "image": "x"}]
TEMPLATE = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": CONTAINERS}}
SELECTOR = {"matchLabels": {"a": "b"}}
JOB_TEMPLATE = {"spec": {"restartPolicy": "Never", "containers": CONTAINERS}}

# kind: (apiVersion, namespaced, the rest of a minimal valid object)
MINIMAL: dict[str, tuple[str, bool, dict[str, Any]]] = {
    "ConfigMap": ("v1", True, {"data": {"k": "v"}}),
    "Secret": ("v1", True, {}),
    "ServiceAccount": ("v1", True, {}),
    "Lease": ("coordination.k8s.io/v1", True, {"spec": {"holderIdentity": "x"}}),
    "Event": (
        "events.k8s.io/v1",
        True,
        {
            "eventTime": "2030-01-01T00:00:00.000000Z",
            "reportingController": "x.io/c",
            "reportingInstance": "i",
            "action": "A",
            "reason": "R",
            "type": "Normal",
            "regarding": {"kind": "Pod", "name": "p", "namespace": "<namespace>"},
        },
    ),
    "Pod": ("v1", True, {"spec": {"containers": CONTAINERS}}),
    "Node": ("v1", False, {}),
    "Namespace": ("v1", False, {}),
    "Service": ("v1", True, {"spec": {"ports": [{"port": 80}]}}),
    "PersistentVolumeClaim": (
        "v1",
        True,
        {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
    ),
    "Deployment": ("apps/v1", True, {"spec": {"selector": SELECTOR, "template": TEMPLATE}}),
    "StatefulSet": (
        "apps/v1",
        True,
        {"spec": {"serviceName": "s", "selector": SELECTOR, "template": TEMPLATE}},
    ),
    "DaemonSet": ("apps/v1", True, {"spec": {"selector": SELECTOR, "template": TEMPLATE}}),
    "ReplicaSet": ("apps/v1", True, {"spec": {"selector": SELECTOR, "template": TEMPLATE}}),
    "Job": ("batch/v1", True, {"spec": {"template": JOB_TEMPLATE}}),
    "CronJob": (
        "batch/v1",
        True,
        {"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": JOB_TEMPLATE}}}},
    ),
    "PodDisruptionBudget": ("policy/v1", True, {"spec": {"minAvailable": 1}}),
}


def test_every_builtin_kind_has_a_minimal_object() -> None:
    assert set(MINIMAL) == set(BUILTIN_KINDS)


async def behaviour(client: Client, kind: str, namespace: str, name: str) -> tuple[Any, ...]:
    api_version, namespaced, rest = MINIMAL[kind]
    if kind == "Event":
        rest = {**rest, "regarding": {**rest["regarding"], "namespace": namespace}}
    metadata: dict[str, Any] = {"name": name}
    if namespaced:
        metadata["namespace"] = namespace
    created = await client.create(
        {"apiVersion": api_version, "kind": kind, "metadata": metadata, **rest}
    )
    changed = {**created, "status": {"observedGeneration": 7, "phase": "Failed"}}
    changed["metadata"] = {**created["metadata"], "labels": {"touched": "yes"}}
    replaced = await client.replace(changed)
    status_ignored = (replaced.get("status") or {}).get("observedGeneration") != 7
    deleted = await client.delete(
        GroupVersionKind.of(created), name, namespace=namespace if namespaced else None
    )
    return ("generation" in created["metadata"], status_ignored, deleted is not None)


@pytest.mark.parametrize("kind", BUILTIN_KINDS)
async def test_builtin_kind_behaves_as_in_the_apiserver(
    crdkit_client: Client, namespace: str, kind: str
) -> None:
    name = f"{kind.lower()}-{namespace[-8:]}"  # unique: Nodes and Namespaces outlive the test
    real = await behaviour(crdkit_client, kind, namespace, name)
    async with FakeCluster().client() as client:
        fake = await behaviour(client, kind, namespace, name)
    assert fake == real, "(generation, status ignored on the main resource, delete returns it)"
