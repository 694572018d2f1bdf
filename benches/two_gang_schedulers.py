"""Two gang schedulers on the same nodes: how often both take the same free GPUs (JSON lines).

The example's Volcano Job operator runs its in-process `GangScheduler`
(``crdkit-gang-scheduler``) and a ``crdkit scheduler --name crdkit-gang`` runs beside it as a
process, both over all 32 nodes (two leaves of 16, 8 GPUs each) of one local control plane.
Each trial submits, at once, a 16-pod Volcano Job (``networkTopology`` hard tier 1) to the
first and a 16-pod coscheduling PodGroup gang to the second: each fills one leaf, and there are
two. Both schedulers count every bound pod, whoever bound it, so a scheduler that sees the
other's binds puts its gang in the other leaf. Between one's decision and the other's watch
event of those binds, both see the same free leaf.

``--release together`` creates the pods held by a scheduling gate and lifts the gates of all
32 at once (the two gangs become placeable within milliseconds of each other, as two jobs
submitted in the same second are); ``--release submit`` submits both gangs without gates.

The kubelets are played with admission, as a kubelet's predicate admission does it
(kubernetes pkg/kubelet/lifecycle/predicate.go): a pod is admitted, in the order the pods are
seen bound to its node, if its requests fit beside the pods already admitted there, and
otherwise reported ``Failed`` with reason ``OutOfnvidia.com/gpu``. Each trial prints the nodes
given more GPUs than they have, the pods rejected per gang, and the Volcano Job's phase.

    python benches/two_gang_schedulers.py --trials 20 --release together
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from examples.gang_scheduler.cluster_setup import install_crds
from examples.gang_scheduler.job_stream import JobShape, TaskShape, manifest
from examples.gang_scheduler.models import Job
from examples.gang_scheduler.run import running_operator
from examples.gang_scheduler.topology import TopologyConfig

from crdkit.client import Client, GroupVersionKind, KubernetesError, NotFound
from crdkit.resources import Pod
from crdkit.scheduling import pod_requests
from crdkit.scheduling.groups.crds import install_pod_group_crds
from crdkit.testing import ControlPlane, GpuClusterShape, create_gpu_cluster, eventually
from crdkit.testing.sim.kubelet import running_status

GATE = "example.com/hold"
GPU = "nvidia.com/gpu"
POD = GroupVersionKind("", "v1", "Pod")
PODGROUP = GroupVersionKind("scheduling.x-k8s.io", "v1alpha1", "PodGroup")
SHAPE = GpuClusterShape.with_nodes(32)
PLATFORM = "crdkit-gang"


class AdmittingKubelet:
    """Every node's kubelet, reduced to GPU admission: see the module docstring."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.admitted: dict[str, dict[str, int]] = defaultdict(dict)  # node: uid -> milli-GPUs
        self.decided: set[str] = set()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> AdmittingKubelet:
        listing = await self.client.list(Pod)
        for pod in listing.items:
            await self._seen("ADDED", pod)
        self._task = asyncio.create_task(self._watch(listing.resource_version))
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _watch(self, version: str | None) -> None:
        # One watch, so the pods are judged in the order the apiserver stored their binds.
        async for event in self.client.watch(Pod, resource_version=version):
            if event.object is not None:
                await self._seen(event.type, event.object)

    async def _seen(self, kind: str, pod: Pod) -> None:
        uid, node = pod.metadata.uid or "", pod.spec.node_name
        if kind == "DELETED" or pod.metadata.deletion_timestamp is not None:
            for held in self.admitted.values():
                held.pop(uid, None)
            return
        if not node or uid in self.decided:
            return
        self.decided.add(uid)
        wanted = pod_requests(pod).get(GPU, 0)
        used = sum(self.admitted[node].values())
        capacity = SHAPE.gpus_per_node * 1000
        if used + wanted <= capacity:
            self.admitted[node][uid] = wanted
            body = running_status(pod)
        else:
            # What the kubelet's rejectPod writes for an InsufficientResourceError.
            body = {
                "status": {
                    "phase": "Failed",
                    "reason": f"OutOf{GPU}",
                    "message": "Pod was rejected: Node didn't have enough resource: "
                    f"{GPU}, requested: {wanted // 1000}, used: {used // 1000}, "
                    f"capacity: {capacity // 1000}",
                }
            }
        with contextlib.suppress(KubernetesError):
            await self.client.patch(
                Pod,
                pod.metadata.name or "",
                body,
                namespace=pod.metadata.namespace,
                subresource="status",
            )


def coscheduling_pods(name: str, namespace: str, gated: bool) -> list[dict[str, Any]]:
    """16 pods of 8 GPUs in the coscheduling PodGroup ``name``, as a training-operator makes
    them for ``--gang-scheduler-name=crdkit-gang``."""
    resources = {GPU: "8"}
    pods = []
    for index in range(16):
        spec: dict[str, Any] = {
            "schedulerName": PLATFORM,
            "containers": [
                {
                    "name": "worker",
                    "image": "trainer:1",
                    "resources": {"requests": resources, "limits": resources},
                }
            ],
        }
        if gated:
            spec["schedulingGates"] = [{"name": GATE}]
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{name}-{index}",
                    "namespace": namespace,
                    "labels": {"scheduling.x-k8s.io/pod-group": name},
                },
                "spec": spec,
            }
        )
    return pods


def volcano_job(name: str, namespace: str, gated: bool) -> dict[str, Any]:
    """A master and 15 workers of 8 GPUs, hard tier 1 (one leaf)."""
    job = manifest(JobShape(name, (TaskShape("master", 1), TaskShape("worker", 15)), tier=1))
    job["metadata"]["namespace"] = namespace
    del job["spec"]["priorityClassName"]  # no PriorityClass here: both gangs are equal
    if gated:
        for task in job["spec"]["tasks"]:
            task["template"]["spec"]["schedulingGates"] = [{"name": GATE}]
    return job


async def trial(client: Client, index: int, gated: bool) -> dict[str, Any]:
    namespace, job_name, group = "race", f"vj{index}", f"cg{index}"
    await client.create(
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": group, "namespace": namespace},
            "spec": {"minMember": 16},
        }
    )
    await asyncio.gather(
        client.create(volcano_job(job_name, namespace, gated)),
        *(client.create(p) for p in coscheduling_pods(group, namespace, gated)),
    )

    async def pods() -> list[Pod]:
        return (await client.list(Pod, namespace=namespace)).items

    deadline = time.monotonic() + 60
    if gated:

        async def all_made() -> bool:
            return len(await pods()) == 32

        await eventually(all_made, within=60, interval=0.1)
        await asyncio.sleep(2.0)  # both schedulers have seen both gangs held
        held = await pods()
        await asyncio.gather(
            *(
                client.patch(
                    Pod,
                    p.metadata.name or "",
                    {"spec": {"schedulingGates": None}},
                    namespace=namespace,
                )
                for p in held
            )
        )
    while time.monotonic() < deadline:
        listed = await pods()
        if len(listed) == 32 and all(p.spec.node_name for p in listed):
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(2.0)  # the kubelet's verdicts and the Job controller's status land
    listed = await pods()
    per_node: dict[str, int] = defaultdict(int)
    leaves: dict[str, set[str]] = defaultdict(set)
    for pod in listed:
        if pod.spec.node_name:
            per_node[pod.spec.node_name] += 8
            gang = job_name if pod.metadata.name.startswith(f"{job_name}-") else group
            leaves[gang].add(pod.spec.node_name.rsplit("-", 1)[0])
    job = await client.get(Job, job_name, namespace=namespace)
    # The Pod model leaves status.reason out; the raw objects have it.
    raw = await client.list(POD, namespace=namespace)
    rejected = [
        p["metadata"]["name"] for p in raw.items if p["status"].get("reason") == f"OutOf{GPU}"
    ]
    result = {
        "trial": index,
        "release": "together" if gated else "submit",
        "bound": sum(1 for p in listed if p.spec.node_name),
        "nodes_over_their_gpus": sum(1 for gpus in per_node.values() if gpus > 8),
        "leaves": {gang: sorted(found) for gang, found in sorted(leaves.items())},
        "rejected": {
            job_name: sum(1 for n in rejected if n.startswith(f"{job_name}-")),
            group: sum(1 for n in rejected if n.startswith(f"{group}-")),
        },
        "volcano_job_phase": job.status.state.phase if job.status else None,
    }
    await client.delete(Job, job_name, namespace=namespace)  # its finalizer deletes its pods
    for pod in listed:
        if (pod.metadata.name or "").startswith(f"{group}-"):
            with contextlib.suppress(NotFound):
                await client.delete(
                    Pod, pod.metadata.name or "", namespace=namespace, grace_period_seconds=0
                )
    await client.delete(PODGROUP, group, namespace=namespace)

    async def all_gone() -> bool:
        return not await pods()

    await eventually(all_gone, within=60, interval=0.1)
    return result


async def main(trials: int, gated: bool, log: Path) -> None:
    async with ControlPlane() as plane, Client.from_control_plane(plane) as client:
        await install_crds(client)
        await install_pod_group_crds(client, ["coscheduling"])
        await create_gpu_cluster(client, SHAPE)
        await plane.create_namespace("race")
        env = {**os.environ, "KUBECONFIG": str(plane.kubeconfig_path)}
        crdkit = str(Path(sys.executable).with_name("crdkit"))
        with log.open("wb") as out:
            child = await asyncio.create_subprocess_exec(
                crdkit,
                "scheduler",
                "--name",
                PLATFORM,
                "--levels",
                ",".join(SHAPE.levels),
                "--topology-rule",
                f"8:required:{SHAPE.leaf_label}",
                "--pod-groups",
                "coscheduling",
                "--metrics-bind-address",
                "0",
                "--health-probe-bind-address",
                "0",
                "--log-format",
                "text",
                stdout=out,
                stderr=out,
                env=env,
            )
            try:
                async with AdmittingKubelet(client), running_operator(client, TopologyConfig()):
                    await asyncio.sleep(3.0)  # crdkit scheduler's caches synced
                    totals = {"trials": 0, "with_nodes_over_their_gpus": 0, "job_failed": 0}
                    for index in range(trials):
                        result = await trial(client, index, gated)
                        print(json.dumps(result), flush=True)
                        totals["trials"] += 1
                        totals["with_nodes_over_their_gpus"] += bool(
                            result["nodes_over_their_gpus"]
                        )
                        totals["job_failed"] += result["volcano_job_phase"] == "Failed"
                    print(json.dumps({"release": "together" if gated else "submit", **totals}))
            finally:
                child.send_signal(signal.SIGTERM)
                await child.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--release", choices=("together", "submit"), default="together")
    parser.add_argument("--log", type=Path, default=Path("/tmp/two-gang-schedulers.log"))
    options = parser.parse_args()
    asyncio.run(main(options.trials, options.release == "together", options.log))
