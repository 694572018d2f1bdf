"""The demo's training jobs: Volcano Job manifests, when to submit them, how long they run.

The stream is written for the default simulated cluster (2 zones x 2 spines x 2 leaves x 16 nodes
x 8 GPUs, RDMA on every other leaf) and tells a story:

- ``llama3-8b-finetune``, a master and 15 workers with 8 GPUs each that must share one leaf
  switch (tier 1) with RDMA NICs, is placed first, on one leaf.
- Large jobs at the spine and zone tiers fill the cluster; small sweeps with a soft constraint
  fill the gaps.
- ``llama3-70b-sft`` (a spine) and ``qwen2-7b-dpo`` (an RDMA leaf) must wait for capacity;
  each is placed once finishing jobs free a domain it fits in.
- ``gpt-neox-20b`` asks for 32 whole nodes under one leaf of 16: it can never fit, and stays
  Pending with the scheduler's reason.

Nothing runs containers in the local control plane, so a job's run time is played by the demo:
after ``run_for_s`` seconds of Running it marks the job's pods Succeeded, as a kubelet would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from examples.gang_scheduler.simulated_cluster import GPU_RESOURCE, RDMA_LABEL

API_VERSION = "batch.volcano.sh/v1alpha1"
SCHEDULER_NAME = "crdkit-gang-scheduler"
HIGH_PRIORITY_CLASS = "training-high"
DEFAULT_PRIORITY_CLASS = "training-default"
PRIORITY_CLASSES: dict[str, int] = {HIGH_PRIORITY_CLASS: 1000, DEFAULT_PRIORITY_CLASS: 100}
"""The PriorityClasses the demo creates (name to value) before it submits the stream."""

TRAINING_IMAGE = "nvcr.io/nvidia/pytorch:24.05-py3"


@dataclass(frozen=True)
class TaskShape:
    """One task of a training job: its role, how many pods, and what each pod needs."""

    name: str
    replicas: int
    gpus: int = 8
    cpus: int = 16
    memory_gi: int = 128


@dataclass(frozen=True)
class StreamEntry:
    """One job of the stream: its manifest, when the demo submits it, and how long it runs."""

    manifest: dict[str, Any]
    submit_at_s: float
    run_for_s: float | None = None
    """Seconds of Running before its pods succeed; None means it runs past the end of the demo."""

    @property
    def name(self) -> str:
        """The job's name."""
        return str(self.manifest["metadata"]["name"])


@dataclass(frozen=True)
class JobShape:
    """A training job in a few numbers; :func:`manifest` turns it into a full Volcano Job."""

    name: str
    tasks: tuple[TaskShape, ...]
    tier: int | None = 1
    """``highestTierAllowed``; None leaves ``networkTopology`` out."""
    mode: Literal["hard", "soft"] = "hard"
    priority_class: str = DEFAULT_PRIORITY_CLASS
    node_selector: dict[str, str] = field(default_factory=dict)
    queue: str = "default"


def pod_template(job: str, task: TaskShape, node_selector: dict[str, str]) -> dict[str, Any]:
    """A full PodTemplateSpec for one task: a torchrun container asking for whole GPUs."""
    resources = {
        "cpu": str(task.cpus),
        "memory": f"{task.memory_gi}Gi",
        GPU_RESOURCE: str(task.gpus),
    }
    spec: dict[str, Any] = {
        "restartPolicy": "OnFailure",
        "containers": [
            {
                "name": task.name,
                "image": TRAINING_IMAGE,
                "command": ["torchrun"],
                "args": [
                    f"--nproc-per-node={task.gpus}",
                    "--rdzv-backend=c10d",
                    f"--rdzv-endpoint={job}-master-0.{job}:29500",
                    "/workspace/train.py",
                ],
                "env": [{"name": "NCCL_DEBUG", "value": "WARN"}],
                "ports": [{"name": "rdzv", "containerPort": 29500}],
                "resources": {"requests": dict(resources), "limits": dict(resources)},
            }
        ],
        "tolerations": [{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}],
    }
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    return {
        "metadata": {"labels": {"app.kubernetes.io/name": job, "role": task.name}},
        "spec": spec,
    }


def manifest(shape: JobShape) -> dict[str, Any]:
    """The Volcano Job manifest for ``shape``: every pod of every task must start together."""
    spec: dict[str, Any] = {
        "minAvailable": sum(task.replicas for task in shape.tasks),
        "schedulerName": SCHEDULER_NAME,
        "queue": shape.queue,
        "priorityClassName": shape.priority_class,
        "tasks": [
            {
                "name": task.name,
                "replicas": task.replicas,
                "minAvailable": task.replicas,
                "template": pod_template(shape.name, task, shape.node_selector),
            }
            for task in shape.tasks
        ],
    }
    if shape.tier is not None:
        topology: dict[str, Any] = {"mode": shape.mode}
        if shape.mode == "hard":
            topology["highestTierAllowed"] = shape.tier
        spec["networkTopology"] = topology
    return {
        "apiVersion": API_VERSION,
        "kind": "Job",
        "metadata": {"name": shape.name, "labels": {"team": "ml-platform"}},
        "spec": spec,
    }


def _master_workers(workers: int, gpus: int = 8) -> tuple[TaskShape, ...]:
    return (TaskShape("master", 1, gpus), TaskShape("worker", workers, gpus))


LLAMA3_8B_FINETUNE = JobShape(
    "llama3-8b-finetune",
    _master_workers(15),
    tier=1,
    priority_class=HIGH_PRIORITY_CLASS,
    node_selector={RDMA_LABEL: "true"},
)
"""The headline job: 16 pods x 8 GPUs, one leaf switch, RDMA NICs."""

NEVER_FITS = JobShape("gpt-neox-20b", _master_workers(31), tier=1)
"""32 whole nodes under one leaf switch of 16 nodes: no capacity change can make it fit."""


def demo_stream() -> list[StreamEntry]:
    """The jobs of ``make demo`` in submission order."""
    return [
        StreamEntry(manifest(LLAMA3_8B_FINETUNE), 0.0),
        StreamEntry(
            manifest(JobShape("mixtral-8x7b-pretrain", _master_workers(47), tier=3)), 1.0, 8.0
        ),
        StreamEntry(manifest(NEVER_FITS), 2.0),
        StreamEntry(
            manifest(JobShape("bert-large-pretrain", _master_workers(15), tier=1)), 3.0, 10.0
        ),
        StreamEntry(manifest(JobShape("vit-h14-train", _master_workers(31), tier=2)), 4.0),
        *(
            StreamEntry(
                manifest(
                    JobShape(
                        f"resnet50-sweep-{index}",
                        (TaskShape("worker", 2, gpus=4, cpus=8, memory_gi=64),),
                        tier=None,
                    )
                ),
                5.0 + 0.25 * index,
                6.0,
            )
            for index in range(4)
        ),
        StreamEntry(manifest(JobShape("llama3-70b-sft", _master_workers(23), tier=2)), 6.0),
        StreamEntry(
            manifest(
                JobShape(
                    "qwen2-7b-dpo",
                    _master_workers(15),
                    tier=1,
                    priority_class=HIGH_PRIORITY_CLASS,
                    node_selector={RDMA_LABEL: "true"},
                )
            ),
            7.0,
        ),
    ]
