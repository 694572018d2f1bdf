"""`SimulatedKubelet` on the real apiserver: it plays what a kubelet does to a pod's life, keyed
by the pod's uid, never by its name alone.

- A bound pod deleted with a grace period (as preemption deletes) is removed once its (at once
  exited) containers are gone, instead of staying Terminating for ever.
- A report about a pod that was deleted and made again under the same name (as the Kubeflow
  training-operator remakes preempted pods) does not land on the new pod.
- A started pod reads ``1/1 Running``: it has a container status per container.

Driven by order, never by waiting on a timer: `eventually` polls for the state the API shows.
"""

from __future__ import annotations

import uuid

import pytest

from crdkit.client import Client, NotFound, PatchType
from crdkit.resources import Namespace, Pod
from crdkit.testing import SimulatedKubelet, create_nodes, eventually, simulated_node

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def bound_pod(name: str, namespace: str, node: str) -> Pod:
    return Pod.model_validate(
        {
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "nodeName": node,
                "terminationGracePeriodSeconds": 30,
                "containers": [
                    {"name": "trainer", "image": "trainer:1"},
                    {"name": "sidecar", "image": "sidecar:1"},
                ],
            },
        }
    )


async def setup(client: Client) -> tuple[str, str]:
    namespace = f"kubelet-{uuid.uuid4().hex[:6]}"
    await client.create(Namespace.model_validate({"metadata": {"name": namespace}}))
    node = f"{namespace}-n1"
    await create_nodes(client, [simulated_node(node)])
    return namespace, node


async def phase_of(client: Client, name: str, namespace: str) -> tuple[str | None, str | None]:
    try:
        pod = await client.get(Pod, name, namespace=namespace)
    except NotFound:
        return None, None
    return pod.metadata.uid, pod.status.phase if pod.status else None


async def test_a_gracefully_deleted_pod_is_removed_once_its_containers_exit(
    crdkit_client: Client,
) -> None:
    client = crdkit_client
    namespace, node = await setup(client)
    async with SimulatedKubelet(client, namespace=namespace):
        await client.create(bound_pod("p", namespace, node))

        async def running() -> bool:
            return (await phase_of(client, "p", namespace))[1] == "Running"

        await eventually(running, what="the pod Running")
        await client.delete(Pod, "p", namespace=namespace, grace_period_seconds=30)

        async def gone() -> bool:
            return (await phase_of(client, "p", namespace))[0] is None

        await eventually(gone, what="the pod removed, not left Terminating")


async def test_a_report_on_a_deleted_pod_never_lands_on_its_namesake(
    crdkit_client: Client,
) -> None:
    client = crdkit_client
    namespace, node = await setup(client)
    async with SimulatedKubelet(client, namespace=namespace) as kubelet:
        first = await client.create(bound_pod("p", namespace, node))

        async def running(uid: str | None) -> bool:
            return await phase_of(client, "p", namespace) == (uid, "Running")

        await eventually(lambda: running(first.metadata.uid), what="the first pod Running")
        await client.delete(Pod, "p", namespace=namespace, grace_period_seconds=0)
        second = await client.create(bound_pod("p", namespace, node))
        assert second.metadata.uid != first.metadata.uid
        await eventually(lambda: running(second.metadata.uid), what="the second pod Running")
        await kubelet.finish([first])  # the first pod's end, reported late
        assert await phase_of(client, "p", namespace) == (second.metadata.uid, "Running")
        await kubelet.finish([second])
        assert await phase_of(client, "p", namespace) == (second.metadata.uid, "Succeeded")


async def test_a_started_pod_reports_each_container_ready(crdkit_client: Client) -> None:
    client = crdkit_client
    namespace, node = await setup(client)
    async with SimulatedKubelet(client, namespace=namespace):
        await client.create(bound_pod("p", namespace, node))

        async def ready() -> bool:
            pod = await client.get(Pod, "p", namespace=namespace)
            statuses = (
                (pod.status.model_extra or {}).get("containerStatuses") if pod.status else None
            )
            return bool(statuses) and all(s.get("ready") for s in statuses)

        await eventually(ready, what="every container ready")
        pod = await client.get(Pod, "p", namespace=namespace)
        assert pod.status is not None
        statuses = (pod.status.model_extra or {})["containerStatuses"]
        assert [(s["name"], s["image"], "running" in s["state"]) for s in statuses] == [
            ("trainer", "trainer:1", True),
            ("sidecar", "sidecar:1", True),
        ]


async def test_its_reports_keep_a_condition_another_component_wrote(
    crdkit_client: Client,
) -> None:
    """A scheduler marks a just-bound pod it is about to preempt (``DisruptionTarget``) before
    the kubelet reports it running: the report merges conditions by type, as a kubelet's
    strategic merge patch does, and the mark stays."""
    client = crdkit_client
    namespace, node = await setup(client)
    await client.create(bound_pod("p", namespace, node))
    mark = {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "PreemptionByScheduler",
        "message": "Preempted by gang g",
    }
    await client.patch(
        Pod, "p", {"status": {"conditions": [mark]}}, namespace=namespace,
        subresource="status", patch_type=PatchType.STRATEGIC,
    )  # fmt: skip
    async with SimulatedKubelet(client, namespace=namespace):

        async def running() -> bool:
            return (await phase_of(client, "p", namespace))[1] == "Running"

        await eventually(running, what="the pod reported running")
        pod = await client.get(Pod, "p", namespace=namespace)
        assert pod.status is not None
        kinds = {c.type for c in pod.status.conditions or []}
        assert {"DisruptionTarget", "Ready"} <= kinds
