"""``crdkit envtest up --gpu-nodes N --kubelets``: a simulated GPU cluster as a user serves it,
then uses it from outside the process, as kubectl or a scheduler would."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest
from _crdkit_process import crdkit

from crdkit.client import Client, NotFound
from crdkit.resources import Node, Pod
from crdkit.testing import (
    RUN_SECONDS_ANNOTATION,
    GpuClusterShape,
    eventually,
)

pytestmark = pytest.mark.integration


def _pod(name: str, node: str, annotations: dict[str, str] | None = None) -> Pod:
    # Bound by nodeName at creation, as a scheduler's binding would leave it.
    return Pod.model_validate(
        {
            "metadata": {"name": name, "namespace": "default", "annotations": annotations or {}},
            "spec": {
                "nodeName": node,
                "containers": [
                    {
                        "name": "trainer",
                        "image": "trainer:1",
                        "resources": {"limits": {"nvidia.com/gpu": "8"}},
                    }
                ],
            },
        }
    )


async def _use(kubeconfig: Path) -> None:
    shape = GpuClusterShape.with_nodes(32)
    async with await Client.from_kubeconfig(kubeconfig) as client:
        nodes = (await client.list(Node)).items
        assert len(nodes) == 32
        leaves = {n.metadata.labels[shape.leaf_label] for n in nodes if n.metadata.labels}
        assert leaves == {"z0-s0-l0", "z0-s0-l1"}
        assert all(n.status and n.status.allocatable["nvidia.com/gpu"] == "8" for n in nodes)
        assert all(not (n.spec and n.spec.taints) for n in nodes)  # no not-ready taint left
        first, second = sorted(n.metadata.name or "" for n in nodes)[:2]

        await client.create(_pod("runs", first))
        await client.create(_pod("ends", second, {RUN_SECONDS_ANNOTATION: "0"}))

        async def phase(name: str) -> str | None:
            pod = await client.get(Pod, name, namespace="default")
            return pod.status.phase if pod.status else None

        async def running() -> bool:
            return await phase("runs") == "Running"

        async def ended() -> bool:
            return await phase("ends") == "Succeeded"

        await eventually(running, what="the pod without a run time Running")
        await eventually(ended, what="the pod of run time 0 Succeeded")
        pod = await client.get(Pod, "runs", namespace="default")
        assert pod.status is not None
        [container] = (pod.status.model_extra or {})["containerStatuses"]
        assert container["ready"]  # kubectl reads 1/1

        # Deleted with a grace period, as controllers and preemption delete: removed for good.
        await client.delete(Pod, "runs", namespace="default", grace_period_seconds=30)

        async def gone() -> bool:
            try:
                await client.get(Pod, "runs", namespace="default")
            except NotFound:
                return True
            return False

        await eventually(gone, what="the pod deleted with a grace period removed")


def test_up_serves_a_gpu_cluster_whose_kubelets_run_pods(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    args = ("envtest", "up", "--gpu-nodes", "32", "--kubelets", "--kubeconfig", str(kubeconfig))
    with crdkit(*args) as up:
        assert up.stdout is not None
        lines = []
        for line in up.stdout:
            lines.append(line)
            if line.startswith("kubelets run"):
                break
        output = "".join(lines)
        assert "32 simulated nodes, 256 GPUs, in 2 leaves of 16" in output
        levels = "topology.kubernetes.io/zone,topology.crdkit.io/spine,topology.crdkit.io/leaf"
        assert f"--levels {levels}" in output
        asyncio.run(_use(kubeconfig))
        up.send_signal(signal.SIGINT)
        assert up.wait(timeout=60) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--kubelets",), "--kubelets: needs --gpu-nodes"),
        (("--gpu-nodes", "20"), "--gpu-nodes: nodes: 20 is not a whole number of leaves"),
        (("--gpu-nodes", "16", "--run-for", "5"), "--run-for: needs --kubelets"),
    ],
)
def test_up_refuses_a_simulated_cluster_it_cannot_serve(
    args: tuple[str, ...], message: str
) -> None:
    with crdkit("envtest", "up", *args) as up:
        _, stderr = up.communicate(timeout=60)
        assert up.returncode == 2
        assert message in stderr
