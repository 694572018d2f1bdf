"""The recipe of docs/guides/recipes/volcano-jobs.md, live: the example's Volcano Job operator
beside a platform's ``crdkit scheduler``, in its two safe setups.

- One scheduler: the operator runs with ``--no-scheduler`` and its pods name the platform's
  ``crdkit scheduler``, which also places another controller's gang (the PodGroup and pods
  that training-operator v1.8.1 makes for the sibling recipe's PyTorchJob, made here by the
  test); both land whole, each in a leaf of its own, and a later Job waits in the same line.
- Pools: the operator keeps its own scheduler, each scheduler has a ``--node-selector`` of its
  own, and each gang lands in its scheduler's pool; a Job waits for its pool even while the
  other pool is empty.

The guide is what runs: the ``crdkit scheduler`` and ``python -m examples.gang_scheduler``
commands of each section are read out of its text, the pools are its ``kubectl label`` lines,
and the Volcano Job is the file beside it. The test adds its own kubeconfig, no fixed ports and
text logs. Every wait is for an order of events (a gang told it waits before anything else is
freed); ``eventually`` only bounds a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import sys
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from _recipe import (
    guide_command,
    podgroup_crd_established,
    process,
    scheduler_argv,
    section_commands,
    tail,
)
from examples.gang_scheduler.cluster_setup import install_crds
from examples.gang_scheduler.models import Job
from examples.gang_scheduler.pods import JOB_NAME_LABEL

from crdkit.client import Client, GroupVersionKind
from crdkit.resources import Event, Node, Pod
from crdkit.scheduling import VolcanoPodGroup, pod_requests
from crdkit.testing import (
    ControlPlane,
    GpuClusterShape,
    SimulatedKubelet,
    create_gpu_cluster,
    eventually,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "guides" / "recipes" / "volcano-jobs.md"
VOLCANO_JOB = GUIDE.with_suffix("") / "volcano-job.yaml"
PYTORCHJOB = ROOT / "docs" / "guides" / "recipes" / "training-operator" / "pytorchjob.yaml"
CRD = GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
PODGROUP = GroupVersionKind("scheduling.x-k8s.io", "v1alpha1", "PodGroup")
GPU = "nvidia.com/gpu"
SHARED, POOLS = "## 1. One scheduler", "## 2. Separate node pools"
EXAMPLE = "python -m examples.gang_scheduler"


def flag(args: Sequence[str], name: str) -> str:
    return args[list(args).index(name) + 1]


def pool_labels(heading: str) -> list[tuple[str, str, str]]:
    """The section's ``kubectl label nodes -l KEY=VALUE POOL=NAME`` lines: (node selector key,
    its value, the label set); the guide keeps to equality selectors."""
    labels = []
    for command in section_commands(GUIDE, heading):
        if command[:3] == ["kubectl", "label", "nodes"]:
            selector, label = flag(command, "-l"), command[-1]
            key, _, value = selector.partition("=")
            labels.append((key, value, label))
    return labels


def volcano_job(name: str | None = None) -> dict[str, Any]:
    [job] = [d for d in yaml.safe_load_all(VOLCANO_JOB.read_text()) if d]
    if name is not None:
        job["metadata"]["name"] = name
    return dict(job)


def pytorchjob_gang(scheduler: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The PodGroup and pods training-operator v1.8.1 makes for the sibling recipe's PyTorchJob
    with ``--gang-scheduler-name=scheduler``: a scheduler-plugins PodGroup of every replica,
    and per replica a pod named ``<job>-<type>-<index>`` with Kubeflow's labels, the PodGroup's
    label and the scheduler's name (Services and owner references left out)."""
    [job] = [d for d in yaml.safe_load_all(PYTORCHJOB.read_text()) if d]
    name, namespace = job["metadata"]["name"], job["metadata"]["namespace"]
    pods: list[dict[str, Any]] = []
    for kind, replica in job["spec"]["pytorchReplicaSpecs"].items():
        for index in range(replica["replicas"]):
            template = copy.deepcopy(replica["template"])
            spec = dict(template["spec"], schedulerName=scheduler)
            labels = {
                "training.kubeflow.org/job-name": name,
                "training.kubeflow.org/operator-name": "pytorchjob-controller",
                "training.kubeflow.org/replica-type": kind.lower(),
                "training.kubeflow.org/replica-index": str(index),
                "scheduling.x-k8s.io/pod-group": name,
            }
            pods.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"{name}-{kind.lower()}-{index}",
                        "namespace": namespace,
                        "labels": labels,
                    },
                    "spec": spec,
                }
            )
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"minMember": len(pods)},
    }
    return group, pods


class Recipe:
    """One run of a section: the cluster, the guide's two processes, and what the test asks."""

    def __init__(self, client: Client, kubeconfig: str, logs: Path) -> None:
        self.client = client
        self.kubeconfig = kubeconfig
        self.logs = logs
        self.running: list[tuple[Any, Path]] = []
        self.leaf_of: dict[str, str] = {}
        self.shape = GpuClusterShape()

    async def nodes(self, envtest: Sequence[str]) -> None:
        assert envtest[0] == "up"
        assert "--kubelets" in envtest
        # The cluster `crdkit envtest up --gpu-nodes N` serves, its kubelets played in process.
        self.shape = GpuClusterShape.with_nodes(int(flag(envtest, "--gpu-nodes")))
        assert self.shape.leaves == 2  # a leaf for each of two 16-pod gangs
        for node in await create_gpu_cluster(self.client, self.shape):
            name = node.metadata.name or ""
            self.leaf_of[name] = node.metadata.labels[self.shape.leaf_label]

    async def start(self, stack: contextlib.AsyncExitStack, name: str, *argv: str) -> None:
        env = {**os.environ, "KUBECONFIG": self.kubeconfig}
        log = self.logs / f"{name}.log"
        child = await stack.enter_async_context(process(log, *argv, env=env))
        self.running.append((child, log))

    async def scheduler(self, stack: contextlib.AsyncExitStack, args: Sequence[str]) -> None:
        crdkit = str(Path(sys.executable).with_name("crdkit"))
        await self.start(stack, "crdkit-scheduler", *scheduler_argv(crdkit, args, self.kubeconfig))

        await self.waiting(
            lambda: podgroup_crd_established(self.client),
            "the PodGroup CRD installed by crdkit scheduler",
            120,
        )

    async def operator(self, stack: contextlib.AsyncExitStack, args: Sequence[str]) -> None:
        # The later flags win: no fixed ports on a shared test machine.
        await self.start(
            stack,
            "volcano-operator",
            sys.executable,
            "-m",
            "examples.gang_scheduler",
            *args,
            "--kubeconfig",
            self.kubeconfig,
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            "0",
        )

    async def waiting(self, check: Callable[[], Awaitable[bool]], what: str, within: float) -> None:
        # A process that died will not make the check come true: say so with its log at once.
        async def alive_and_true() -> bool:
            for child, log in self.running:
                assert child.returncode is None, f"exited {child.returncode}\n{tail(log)}"
            return await check()

        try:
            await eventually(alive_and_true, within=within, what=what, interval=0.25)
        except AssertionError as error:
            logs = [tail(log) for _, log in self.running]
            raise AssertionError("\n".join([str(error), *logs])) from None

    async def pods(self, selector: str, namespace: str = "default") -> list[Pod]:
        return (await self.client.list(Pod, namespace=namespace, label_selector=selector)).items

    async def bound_whole(self, selector: str, count: int, what: str) -> set[str]:
        """Wait for all ``count`` pods of ``selector`` bound; the leaves they are in."""

        async def all_bound() -> bool:
            pods = await self.pods(selector)
            return len(pods) == count and all(p.spec.node_name for p in pods)

        await self.waiting(all_bound, what, 180)
        nodes = [p.spec.node_name or "" for p in await self.pods(selector)]
        assert len(set(nodes)) == count  # one 8-GPU rank per node
        return {self.leaf_of[n] for n in nodes}

    async def told_to_wait(self, job: str) -> None:
        """Wait for the Volcano Job's gang to be told it waits for a leaf; a pod of it bound
        before that is a gang bound in part or out of its leaf: fail at once."""

        async def told() -> bool:
            bound = [
                p.metadata.name
                for p in await self.pods(f"{JOB_NAME_LABEL}={job}")
                if p.spec.node_name
            ]
            assert not bound, f"bound while no leaf had room for {job}: {bound}"
            events = (await self.client.list(Event, namespace="default")).items
            return any(
                e.reason == "FailedScheduling"
                and e.regarding is not None
                and e.regarding.kind == "PodGroup"
                and e.regarding.name == job
                and self.shape.leaf_label in (e.note or "")
                for e in events
            )

        await self.waiting(told, f"{job} told it waits for a leaf", 120)

    async def no_node_over_its_gpus(self) -> None:
        used: dict[str, int] = defaultdict(int)
        for pod in (await self.client.list(Pod)).items:
            if pod.spec.node_name and (pod.status is None or pod.status.phase != "Failed"):
                used[pod.spec.node_name] += pod_requests(pod).get(GPU, 0)
        over = {n: u for n, u in used.items() if u > self.shape.gpus_per_node * 1000}
        assert not over, f"nodes given more GPUs than they have (milli-GPUs): {over}"

    async def job_running_in(self, name: str, leaf: str) -> None:
        async def running() -> bool:
            job = await self.client.get(Job, name, namespace="default")
            return job.status is not None and job.status.state.phase == "Running"

        await self.waiting(running, f"the Volcano Job {name} Running", 120)
        job = await self.client.get(Job, name, namespace="default")
        assert job.status is not None
        assert job.status.placement is not None
        assert job.status.placement.domain_name == leaf

        async def group_running() -> bool:
            # The scheduler's word on the gang, as `kubectl get podgroups` shows it.
            group = await self.client.get(VolcanoPodGroup, name, namespace="default")
            return group.status is not None and group.status.phase == "Running"

        await self.waiting(group_running, f"the PodGroup {name} Running", 60)

    async def delete_gang(self, group: dict[str, Any], pods: list[dict[str, Any]]) -> None:
        """What the other controller does when its job ends: its pods and PodGroup go."""
        for pod in pods:
            await self.client.delete(
                Pod, pod["metadata"]["name"], namespace="default", grace_period_seconds=0
            )
        await self.client.delete(PODGROUP, group["metadata"]["name"], namespace="default")

        async def gone() -> bool:
            return not await self.pods(f"scheduling.x-k8s.io/pod-group={group['metadata']['name']}")

        await self.waiting(gone, "the other controller's pods deleted", 60)


@contextlib.asynccontextmanager
async def recipe(tmp_path: Path) -> AsyncIterator[tuple[Recipe, contextlib.AsyncExitStack]]:
    async with ControlPlane() as plane, Client.from_control_plane(plane) as client:
        # The guide's `envtest up --crds examples/gang_scheduler/config/crd`.
        await install_crds(client)
        run = Recipe(client, str(plane.kubeconfig_path), tmp_path)
        await run.nodes(guide_command(GUIDE, section=SHARED, program="crdkit envtest"))
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(SimulatedKubelet(client))
            yield run, stack


def test_the_guide_runs_each_setups_commands_once() -> None:
    shared_scheduler = guide_command(GUIDE, section=SHARED, program="crdkit scheduler")
    shared_operator = guide_command(GUIDE, section=SHARED, program=EXAMPLE)
    assert "--no-scheduler" in shared_operator
    assert flag(shared_operator, "--scheduler-name") == flag(shared_scheduler, "--name")
    assert "volcano" in flag(shared_scheduler, "--pod-groups").split(",")
    pool_scheduler = guide_command(GUIDE, section=POOLS, program="crdkit scheduler")
    pool_operator = guide_command(GUIDE, section=POOLS, program=EXAMPLE)
    assert "--no-scheduler" not in pool_operator
    pools = {label for _, _, label in pool_labels(POOLS)}
    mine, theirs = flag(pool_operator, "--node-selector"), flag(pool_scheduler, "--node-selector")
    assert {mine, theirs} == pools
    assert mine != theirs


async def test_one_scheduler_places_both_controllers_gangs_each_in_a_leaf(tmp_path: Path) -> None:
    async with recipe(tmp_path) as (run, stack):
        scheduler_args = guide_command(GUIDE, section=SHARED, program="crdkit scheduler")
        await run.scheduler(stack, scheduler_args)
        await run.operator(stack, guide_command(GUIDE, section=SHARED, program=EXAMPLE))
        job = volcano_job()
        name = job["metadata"]["name"]
        group, others = pytorchjob_gang(flag(scheduler_args, "--name"))
        other_selector = f"scheduling.x-k8s.io/pod-group={group['metadata']['name']}"

        # Both controllers' jobs at once: one scheduler decides them one after the other.
        await run.client.create(group)
        await asyncio.gather(run.client.create(job), *(run.client.create(p) for p in others))
        [leaf] = await run.bound_whole(f"{JOB_NAME_LABEL}={name}", 16, "the Volcano Job bound")
        [other_leaf] = await run.bound_whole(other_selector, len(others), "the other gang bound")
        assert leaf != other_leaf
        await run.no_node_over_its_gpus()
        await run.job_running_in(name, leaf)
        pods = await run.pods(f"{JOB_NAME_LABEL}={name}")
        assert {p.spec.scheduler_name for p in pods} == {flag(scheduler_args, "--name")}

        # A second Job waits whole in the same line, and takes the leaf the other job leaves.
        second = volcano_job(f"{name}-2")
        await run.client.create(second)
        await run.told_to_wait(f"{name}-2")
        await run.delete_gang(group, others)
        leaves = await run.bound_whole(f"{JOB_NAME_LABEL}={name}-2", 16, "the second Job bound")
        assert leaves == {other_leaf}
        await run.no_node_over_its_gpus()
        await run.job_running_in(f"{name}-2", other_leaf)


async def test_separate_pools_keep_each_schedulers_gangs_on_its_own_pool(tmp_path: Path) -> None:
    async with recipe(tmp_path) as (run, stack):
        pools: dict[str, str] = {}  # pool label -> its leaf
        for key, value, label in pool_labels(POOLS):
            pool_key, _, pool = label.partition("=")
            for node, leaf in run.leaf_of.items():
                if key == run.shape.leaf_label and leaf == value:
                    await run.client.patch(Node, node, {"metadata": {"labels": {pool_key: pool}}})
            pools[label] = value
        assert len(pools) == 2
        scheduler_args = guide_command(GUIDE, section=POOLS, program="crdkit scheduler")
        operator_args = guide_command(GUIDE, section=POOLS, program=EXAMPLE)
        await run.scheduler(stack, scheduler_args)
        await run.operator(stack, operator_args)
        job = volcano_job()
        name = job["metadata"]["name"]
        group, others = pytorchjob_gang(flag(scheduler_args, "--name"))
        other_selector = f"scheduling.x-k8s.io/pod-group={group['metadata']['name']}"

        # Both at once, each to its own scheduler: without pools the two raced for the same
        # leaf (benches/two_gang_schedulers.py); here each has one leaf to choose from.
        await run.client.create(group)
        await asyncio.gather(run.client.create(job), *(run.client.create(p) for p in others))
        leaves = await run.bound_whole(f"{JOB_NAME_LABEL}={name}", 16, "the Volcano Job bound")
        other_leaves = await run.bound_whole(other_selector, len(others), "the other gang bound")
        assert leaves == {pools[flag(operator_args, "--node-selector")]}
        assert other_leaves == {pools[flag(scheduler_args, "--node-selector")]}
        await run.no_node_over_its_gpus()
        await run.job_running_in(name, pools[flag(operator_args, "--node-selector")])

        # The platform's leaf empties; a second Job still waits for its own pool.
        await run.delete_gang(group, others)
        await run.client.create(volcano_job(f"{name}-2"))
        await run.told_to_wait(f"{name}-2")
