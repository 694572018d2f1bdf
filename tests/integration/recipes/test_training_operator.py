"""The recipe of docs/guides/recipes/training-operator.md, live: Kubeflow's training-operator
v1.8.1 (built unmodified from the Go module proxy by tools/training-operator/build.sh) runs with
``--gang-scheduler-name``, ``crdkit scheduler`` is its gang scheduler, and a 16-pod PyTorchJob
lands whole in one leaf switch of a simulated GPU cluster and reaches Running.

The guide is what runs: its manifests are the files beside it, and the two long-running
commands (``crdkit scheduler`` and the training-operator) are read out of its text, so a guide
whose commands or manifests stop working fails here. The test adds only what a shared test
machine needs: its own kubeconfig, no fixed ports, and text logs.

Unlike the guide's empty cluster, every leaf holds one busy node when the job arrives, so no
leaf has room for all 16 pods: the job must wait whole (a scheduler without the leaf rule would
spread it over both leaves at once), and land in the leaf that is freed.
"""

from __future__ import annotations

import base64
import contextlib
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from _recipe import (
    build,
    guide_command,
    manifests,
    module_dir,
    podgroup_crd_established,
    process,
    scheduler_argv,
    tail,
)

from crdkit.client import Client, GroupVersionKind
from crdkit.resources import Event, Node, Pod
from crdkit.testing import (
    ControlPlane,
    GpuClusterShape,
    SimulatedKubelet,
    create_gpu_cluster,
    eventually,
)
from crdkit.testing.envtest.processes import free_ports

# A cold build of the operator takes minutes on two cores (see the guide); the limit only
# guards against a hang.
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parents[3]
BUILD = ROOT / "tools" / "training-operator" / "build.sh"
GUIDE = ROOT / "docs" / "guides" / "recipes" / "training-operator.md"
MANIFESTS = GUIDE.with_suffix("")
MODULE = "github.com/kubeflow/training-operator"
# Where the operator's certificate rotator looks for its serving certificate, fixed in
# training-operator v1.8.1 (pkg/cert); in a cluster its Deployment mounts the Secret here.
CERT_DIR = Path("/tmp/k8s-webhook-server/serving-certs")
CRD = GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
PYTORCHJOB = GroupVersionKind("kubeflow.org", "v1", "PyTorchJob")
PODGROUP = GroupVersionKind("scheduling.x-k8s.io", "v1alpha1", "PodGroup")
SECRET = GroupVersionKind("", "v1", "Secret")


def write_certs(secret: dict[str, Any]) -> bool:
    """What the kubelet's Secret volume does in a cluster (and the guide's kubectl lines do
    here): the operator's serving certificate and key as files; False while the operator's
    rotator has not filled the Secret yet."""
    data = secret.get("data") or {}
    if not data.get("tls.crt") or not data.get("tls.key"):
        return False
    CERT_DIR.mkdir(parents=True, exist_ok=True)
    for name in ("tls.crt", "tls.key"):
        # Renamed into place whole: the operator's certificate watcher may read at any moment.
        partial = CERT_DIR / f".{name}.{os.getpid()}"
        partial.write_bytes(base64.b64decode(data[name]))
        partial.replace(CERT_DIR / name)
    return True


def blocker(name: str, node: str, gpus: int) -> Pod:
    # Another team's pod, bound to the node as a scheduler's binding would leave it.
    return Pod.model_validate(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "nodeName": node,
                "containers": [
                    {
                        "name": "busy",
                        "image": "busy:1",
                        "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
                    }
                ],
            },
        }
    )


def test_the_guide_runs_each_long_running_command_once() -> None:
    scheduler = guide_command(GUIDE, "crdkit scheduler")
    operator = guide_command(GUIDE, "training-operator.v1")
    name = scheduler[scheduler.index("--name") + 1]
    assert f"--gang-scheduler-name={name}" in operator
    assert "--topology-rule" in scheduler


async def test_pytorchjob_runs_whole_in_one_leaf(tmp_path: Path) -> None:
    operator_binary = build(BUILD)
    crds = module_dir(MODULE, BUILD.parent) / "manifests" / "base" / "crds"
    scheduler_args = guide_command(GUIDE, "crdkit scheduler")
    operator_args = guide_command(GUIDE, "training-operator.v1")
    [job] = manifests(MANIFESTS / "pytorchjob.yaml")
    job_name = job["metadata"]["name"]
    namespace = job["metadata"]["namespace"]
    replicas = job["spec"]["pytorchReplicaSpecs"]
    pods_wanted = sum(spec["replicas"] for spec in replicas.values())
    envtest = guide_command(GUIDE, "crdkit envtest")
    assert envtest[0] == "up"
    assert "--kubelets" in envtest
    # The cluster `crdkit envtest up --gpu-nodes N` serves, its kubelets played in process here.
    shape = GpuClusterShape.with_nodes(int(envtest[envtest.index("--gpu-nodes") + 1]))
    assert pods_wanted == shape.nodes_per_leaf  # the job fills one leaf exactly

    logs = [tmp_path / "scheduler.log", tmp_path / "training-operator.log"]
    running: list[Any] = []

    async def waiting(check: Callable[[], Awaitable[bool]], what: str, within: float) -> None:
        # A process that died will not make the check come true: say so with its log at once.
        async def alive_and_true() -> bool:
            for child, log in zip(running, logs, strict=False):
                assert child.returncode is None, f"exited {child.returncode}\n{tail(log)}"
            return await check()

        try:
            await eventually(alive_and_true, within=within, what=what, interval=0.25)
        except AssertionError as error:
            raise AssertionError("\n".join([str(error), *map(tail, logs)])) from None

    async with ControlPlane() as plane, Client.from_control_plane(plane) as client:
        await plane.install_crds([crds])
        await create_gpu_cluster(client, shape)
        leaf_of = {
            n.metadata.name: (n.metadata.labels or {})[shape.leaf_label]
            for n in (await client.list(Node)).items
        }
        leaves = sorted(set(leaf_of.values()))
        first_node = {leaf: min(n for n, lf in leaf_of.items() if lf == leaf) for leaf in leaves}
        for index, leaf in enumerate(leaves):
            await client.create(blocker(f"busy-{index}", first_node[leaf], shape.gpus_per_node))

        kubeconfig = str(plane.kubeconfig_path)
        env = {**os.environ, "KUBECONFIG": kubeconfig}
        # The operator's namespace comes from MY_POD_NAMESPACE (else kubeflow, as the guide
        # has it); its webhook server reads the certificate under $TMPDIR while its rotator
        # waits for it under /tmp, so both are pinned.
        env.pop("MY_POD_NAMESPACE", None)
        operator_env = {**env, "TMPDIR": "/tmp"}
        [webhook_port] = free_ports(1)
        crdkit = str(Path(sys.executable).with_name("crdkit"))

        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(SimulatedKubelet(client))
            running.append(
                await stack.enter_async_context(
                    process(logs[0], *scheduler_argv(crdkit, scheduler_args, kubeconfig), env=env)
                )
            )

            await waiting(
                lambda: podgroup_crd_established(client),
                "the PodGroup CRD installed by crdkit scheduler",
                120,
            )

            for document in manifests(MANIFESTS / "operator-namespace.yaml"):
                await client.create(document)
            running.append(
                await stack.enter_async_context(
                    process(
                        logs[1],
                        operator_binary,
                        *operator_args,
                        f"--kubeconfig={kubeconfig}",
                        f"--webhook-server-port={webhook_port}",
                        env=operator_env,
                    )
                )
            )
            [secret] = [
                d for d in manifests(MANIFESTS / "operator-namespace.yaml") if d["kind"] == "Secret"
            ]

            async def certs_written() -> bool:
                got = await client.get(
                    SECRET, secret["metadata"]["name"], namespace=secret["metadata"]["namespace"]
                )
                return write_certs(got)

            await waiting(certs_written, "the operator's certificate in its Secret", 120)

            await client.create(job)

            async def job_pods() -> list[Pod]:
                listing = await client.list(
                    Pod,
                    namespace=namespace,
                    label_selector=f"training.kubeflow.org/job-name={job_name}",
                )
                return listing.items

            async def told_to_wait() -> bool:
                # The scheduler's verdict on the whole gang: no leaf has room for it. A pod bound
                # before it is a gang spread over leaves, or bound in part: fail at once.
                bound = [p.metadata.name for p in await job_pods() if p.spec.node_name]
                assert not bound, f"bound while no leaf had room: {bound}"
                events = (await client.list(Event, namespace=namespace)).items
                return any(
                    e.reason == "FailedScheduling"
                    and e.regarding is not None
                    and e.regarding.kind == "PodGroup"
                    and e.regarding.name == job_name
                    and shape.leaf_label in (e.note or "")
                    for e in events
                )

            await waiting(told_to_wait, "the gang told it waits for a leaf", 180)
            pods = await job_pods()
            assert len(pods) == pods_wanted, [p.metadata.name for p in pods]
            assert not [p.metadata.name for p in pods if p.spec.node_name], "bound in part"
            assert {p.spec.scheduler_name for p in pods} == {
                scheduler_args[scheduler_args.index("--name") + 1]
            }
            group = await client.get(PODGROUP, job_name, namespace=namespace)
            assert group["spec"]["minMember"] == pods_wanted

            # Free the second leaf: the whole job goes there, and nowhere else.
            await client.delete(Pod, "busy-1", namespace="default")

            async def all_bound() -> bool:
                pods = await job_pods()
                return len(pods) == pods_wanted and all(p.spec.node_name for p in pods)

            await waiting(all_bound, "every pod of the job bound", 180)
            pods = await job_pods()
            nodes = [p.spec.node_name or "" for p in pods]
            assert len(set(nodes)) == pods_wanted  # one 8-GPU rank per node
            assert {leaf_of[n] for n in nodes} == {leaves[1]}

            async def job_running() -> bool:
                got = await client.get(PYTORCHJOB, job_name, namespace=namespace)
                conditions = (got.get("status") or {}).get("conditions", [])
                return any(c["type"] == "Running" and c["status"] == "True" for c in conditions)

            await waiting(job_running, "the PyTorchJob Running", 180)
            for child in running:
                assert child.returncode is None
