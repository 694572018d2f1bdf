"""The recipe of docs/guides/recipes/kueue.md, live: Kueue v0.17.0 (built unmodified from the Go
module proxy by tools/kueue-controller/build.sh) decides quota and admission, and ``crdkit
scheduler`` places each admitted gang whole inside one leaf switch of a simulated GPU cluster.

Kueue holds a queued pod back with its ``kueue.x-k8s.io/admission`` scheduling gate (added by its
pod webhook, called here by the local apiserver) and removes the gate when it admits the pod's
group; crdkit must not place a gated pod, and must place the gang once its gates are gone.

The guide is what runs: its manifests are the files beside it, and the two long-running commands
(``crdkit scheduler`` and Kueue) are read out of its text, so a guide whose commands or manifests
stop working fails here. The test adds only what a shared test machine needs: its own
kubeconfig, a free webhook port, its own certificate folder, and text logs.

Two gangs of 32 GPUs each meet a ClusterQueue of 48: the cluster has room for both (256 GPUs),
so only Kueue's quota keeps the second back. The second must stay gated and unbound, crdkit
having looked at it and said it is gated, until the first finishes; then Kueue admits it and
crdkit places it whole.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import shutil
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
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

from crdkit.client import Client, GroupVersionKind, NotFound
from crdkit.resources import Event, Node, Pod
from crdkit.testing import (
    ControlPlane,
    GpuClusterShape,
    SimulatedKubelet,
    create_gpu_cluster,
    eventually,
)
from crdkit.testing.envtest.processes import free_ports
from crdkit.webhook import write_self_signed

# A cold build of Kueue takes minutes on two cores (see the guide); the limit only guards
# against a hang.
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parents[3]
BUILD = ROOT / "tools" / "kueue-controller" / "build.sh"
GUIDE = ROOT / "docs" / "guides" / "recipes" / "kueue.md"
MANIFESTS = GUIDE.with_suffix("")
MODULE = "sigs.k8s.io/kueue"
# Where Kueue v0.17.0 reads its metrics server's certificate whenever its internal certificate
# management is off (fixed in cmd/kueue/main.go; a Deployment mounts a Secret there). It exits
# at start when the files are missing, even with the metrics server off.
METRICS_CERT_DIR = Path("/etc/kueue/metrics/certs")
ADMISSION_GATE = "kueue.x-k8s.io/admission"
CRD = GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
CLUSTER_QUEUE = GroupVersionKind("kueue.x-k8s.io", "v1beta2", "ClusterQueue")
WORKLOAD = GroupVersionKind("kueue.x-k8s.io", "v1beta2", "Workload")


def gates(pod: Pod) -> list[str]:
    return [g["name"] for g in (pod.spec.model_extra or {}).get("schedulingGates") or []]


async def listening(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return False
    writer.close()
    await writer.wait_closed()
    return True


def kueue_files(tmp_path: Path, webhook_port: int) -> tuple[Path, dict[str, Any]]:
    """What the guide's step 4 makes, in this test's own folder and on a free port: the
    certificate (and the copy Kueue insists on for its metrics server), Kueue's configuration
    file, and its webhook configuration with the CA as ``caBundle`` (the guide's patch)."""
    certs = tmp_path / "certs"
    ca_bundle = write_self_signed(certs, ["127.0.0.1"])
    METRICS_CERT_DIR.mkdir(parents=True, exist_ok=True)
    for name in ("tls.crt", "tls.key"):
        shutil.copyfile(certs / name, METRICS_CERT_DIR / name)
    [config] = manifests(MANIFESTS / "kueue-config.yaml")
    guide_port = config["webhook"]["port"]
    config["webhook"] |= {"port": webhook_port, "certDir": str(certs)}
    config_file = tmp_path / "kueue-config.yaml"
    config_file.write_text(yaml.safe_dump(config))
    [webhooks] = manifests(MANIFESTS / "kueue-webhook.yaml")
    for hook in webhooks["webhooks"]:
        client_config = hook["clientConfig"]
        client_config["url"] = client_config["url"].replace(f":{guide_port}/", f":{webhook_port}/")
        client_config["caBundle"] = base64.b64encode(ca_bundle).decode()
    return config_file, webhooks


def test_the_guide_runs_each_long_running_command_once() -> None:
    scheduler = guide_command(GUIDE, "crdkit scheduler")
    kueue = guide_command(GUIDE, "kueue")
    assert any(a.startswith("--config=") for a in kueue)
    assert "--topology-rule" in scheduler
    name = scheduler[scheduler.index("--name") + 1]
    for gang in ("train-a.yaml", "train-b.yaml"):
        pods = [d for d in manifests(MANIFESTS / gang) if d["kind"] == "Pod"]
        assert {p["spec"]["schedulerName"] for p in pods} == {name}


def test_the_kueue_configuration_serves_the_webhook_the_guide_installs() -> None:
    [config] = manifests(MANIFESTS / "kueue-config.yaml")
    [webhooks] = manifests(MANIFESTS / "kueue-webhook.yaml")
    [hook] = webhooks["webhooks"]
    url = f"https://{config['webhook']['host']}:{config['webhook']['port']}/mutate--v1-pod"
    assert hook["clientConfig"]["url"] == url
    assert config["integrations"]["frameworks"] == ["pod"]
    assert config["internalCertManagement"] == {"enable": False}


async def test_kueue_admits_and_crdkit_places_whole_gangs(tmp_path: Path) -> None:
    kueue_binary = build(BUILD)
    crds = module_dir(MODULE, BUILD.parent) / "config" / "components" / "crd" / "bases"
    scheduler_args = guide_command(GUIDE, "crdkit scheduler")
    kueue_args = guide_command(GUIDE, "kueue")
    envtest = guide_command(GUIDE, "crdkit envtest")
    assert envtest[0] == "up"
    assert "--kubelets" in envtest
    # The cluster `crdkit envtest up --gpu-nodes N` serves, its kubelets played in process here.
    shape = GpuClusterShape.with_nodes(int(envtest[envtest.index("--gpu-nodes") + 1]))
    gangs = {name: manifests(MANIFESTS / f"{name}.yaml") for name in ("train-a", "train-b")}
    [quota] = [
        r["nominalQuota"]
        for d in manifests(MANIFESTS / "queues.yaml")
        if d["kind"] == "ClusterQueue"
        for g in d["spec"]["resourceGroups"]
        for f in g["flavors"]
        for r in f["resources"]
        if r["name"] == "nvidia.com/gpu"
    ]

    def gpus(docs: list[dict[str, Any]]) -> int:
        return sum(
            int(c["resources"]["limits"]["nvidia.com/gpu"])
            for d in docs
            if d["kind"] == "Pod"
            for c in d["spec"]["containers"]
        )

    # The premise: each gang fits the quota alone, the two do not, and the cluster has room
    # for both, so only Kueue can hold the second back.
    assert max(map(gpus, gangs.values())) <= quota < sum(map(gpus, gangs.values()))
    assert sum(map(gpus, gangs.values())) <= shape.nodes * shape.gpus_per_node

    [webhook_port] = free_ports(1)
    config_file, webhooks = kueue_files(tmp_path, webhook_port)
    kueue_args = [f"--config={config_file}" if a.startswith("--config=") else a for a in kueue_args]

    logs = [tmp_path / "scheduler.log", tmp_path / "kueue.log"]
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
        kubeconfig = str(plane.kubeconfig_path)
        env = {**os.environ, "KUBECONFIG": kubeconfig}
        crdkit = str(Path(sys.executable).with_name("crdkit"))

        async with contextlib.AsyncExitStack() as stack:
            kubelet = await stack.enter_async_context(SimulatedKubelet(client))
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

            running.append(
                await stack.enter_async_context(
                    process(
                        logs[1], kueue_binary, *kueue_args, f"--kubeconfig={kubeconfig}", env=env
                    )
                )
            )

            async def webhook_served() -> bool:
                return await listening(webhook_port)

            await waiting(webhook_served, "Kueue's webhook server listening", 180)
            await client.create(webhooks)
            for document in manifests(MANIFESTS / "queues.yaml"):
                await client.create(document)

            async def queue_active() -> bool:
                got = await client.get(CLUSTER_QUEUE, "gpu-cluster-queue")
                conditions = (got.get("status") or {}).get("conditions", [])
                return any(c["type"] == "Active" and c["status"] == "True" for c in conditions)

            await waiting(queue_active, "the ClusterQueue Active", 120)

            async def submit(name: str) -> None:
                for document in gangs[name]:
                    created = await client.create(document)
                    if document["kind"] == "Pod":
                        # The webhook ran: the pod exists only with Kueue's gate on it.
                        assert ADMISSION_GATE in gates(Pod.model_validate(created)), created

            async def pods_of(name: str) -> list[Pod]:
                listing = await client.list(
                    Pod,
                    namespace="default",
                    label_selector=f"kueue.x-k8s.io/pod-group-name={name}",
                )
                return listing.items

            async def admitted(name: str) -> bool:
                try:
                    got = await client.get(WORKLOAD, name, namespace="default")
                except NotFound:
                    return False
                conditions = (got.get("status") or {}).get("conditions", [])
                return any(c["type"] == "Admitted" and c["status"] == "True" for c in conditions)

            async def placed_whole(name: str) -> None:
                """The gang's pods all bound, ungated, one per node, inside one leaf."""
                pods = await pods_of(name)
                assert len(pods) == 4, [p.metadata.name for p in pods]
                assert all(not gates(p) for p in pods)
                nodes = [p.spec.node_name or "" for p in pods]
                assert len(set(nodes)) == len(pods)  # one 8-GPU pod per node
                assert len({leaf_of[n] for n in nodes}) == 1, nodes

            async def all_bound(name: str) -> bool:
                pods = await pods_of(name)
                return len(pods) == 4 and all(p.spec.node_name for p in pods)

            # The first gang: admitted by Kueue, then placed by crdkit.
            await submit("train-a")
            await waiting(lambda: all_bound("train-a"), "every pod of train-a bound", 180)
            assert await admitted("train-a")
            await placed_whole("train-a")

            # The second gang: over quota, so Kueue keeps its gates on. crdkit sees it and says
            # it is gated (a FailedScheduling event on its PodGroup), and binds none of it.
            await submit("train-b")

            async def told_gated() -> bool:
                bound = [p.metadata.name for p in await pods_of("train-b") if p.spec.node_name]
                assert not bound, f"bound while held by Kueue: {bound}"
                events = (await client.list(Event, namespace="default")).items
                return any(
                    e.reason == "FailedScheduling"
                    and e.regarding is not None
                    and e.regarding.kind == "PodGroup"
                    and e.regarding.name == "train-b"
                    and "SchedulingGated" in (e.note or "")
                    and ADMISSION_GATE in (e.note or "")
                    for e in events
                )

            await waiting(told_gated, "crdkit telling train-b it is gated", 120)

            async def kueue_held_back() -> bool:
                # Kueue made the group's Workload and found no quota for it.
                try:
                    got = await client.get(WORKLOAD, "train-b", namespace="default")
                except NotFound:
                    return False
                conditions = (got.get("status") or {}).get("conditions", [])
                return any(
                    c["type"] == "QuotaReserved" and c["status"] == "False" for c in conditions
                )

            await waiting(kueue_held_back, "Kueue leaving train-b without quota", 120)
            pods = await pods_of("train-b")
            assert len(pods) == 4
            assert all(ADMISSION_GATE in gates(p) and not p.spec.node_name for p in pods)
            assert not await admitted("train-b")

            # The first gang ends: Kueue gives its quota to the second, crdkit places it.
            await kubelet.finish(await pods_of("train-a"))
            await waiting(lambda: all_bound("train-b"), "every pod of train-b bound", 180)
            assert await admitted("train-b")
            await placed_whole("train-b")
            for child in running:
                assert child.returncode is None
