"""End-to-end benchmark of the gang scheduler on a real local control plane.

    python benches/gang_e2e_bench.py --nodes 1024 --jobs 200 --json

Starts kube-apiserver and etcd, installs the Job and PodGroup CRDs, registers ``--nodes``
simulated GPU nodes (8 GPUs each, leaves of 16 nodes, four leaves per spine, four spines per
zone), runs the example operator in this process (its Job controller makes each Job's PodGroup
and unbound pods; crdkit.scheduling's GangScheduler binds them), then submits ``--jobs``
Volcano Jobs, all at once (``--concurrency`` creates in flight) or ``--rate`` per second, and
waits until every pod of every job is bound.

Jobs (fixed seed): 1, 2, 4, 8 or 16 pods of 8 GPUs (35/30/20/10/5 %), jobs of 8 and more pods
with ``networkTopology: hard, highestTierAllowed: 1`` (one leaf), smaller ones ``soft``. The mix
takes about two thirds of a 1,024-node cluster, so every job fits and no job waits for another
to finish: the figures are the scheduler's and the apiserver's, not queueing for capacity.

Timed per job: from its create call returning to the moment a pod informer (a separate watch,
like any client's) has seen all its pods bound (``spec.nodeName`` set). ``jobs_per_s`` is the
job count over the time from the first create to the last job bound. Output: one JSON object
(``nodes``, ``jobs``, ``pods``, ``placed``, ``bind_p50_ms``, ``bind_p99_ms``, ``bind_max_ms``,
``jobs_per_s``, ``wall_s``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the examples package
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benches' shared modules

from examples.gang_scheduler.cluster_setup import (
    create_simulated_cluster,
    install_crds,
)
from examples.gang_scheduler.job_stream import JobShape, TaskShape, manifest
from examples.gang_scheduler.pods import JOB_NAME_LABEL
from examples.gang_scheduler.run import running_operator
from examples.gang_scheduler.simulated_cluster import SIMULATED_LABEL, ClusterShape
from examples.gang_scheduler.topology import TopologyConfig

from _bind_latency import JobsBound, bind_latency_row
from crdkit.client import Client
from crdkit.resources import Pod
from crdkit.runtime import Informer
from crdkit.testing import ControlPlane

NAMESPACE = "bench"
SIZES = (1, 2, 4, 8, 16)
WEIGHTS = (35, 30, 20, 10, 5)


def job_mix(count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` job manifests, sizes drawn with a fixed seed."""
    rng = random.Random(seed)
    jobs = []
    for index in range(count):
        pods = rng.choices(SIZES, WEIGHTS)[0]
        shape = JobShape(
            f"job-{index:04d}",
            (TaskShape("worker", pods),),
            tier=1,
            mode="hard" if pods >= 8 else "soft",
        )
        jobs.append(manifest(shape))
    return jobs


async def measure(
    nodes: int, jobs: int, concurrency: int, seed: int, wait_s: float, rate: float
) -> dict[str, Any]:
    shape = ClusterShape.with_about(nodes, name_prefix="bench")
    topology = TopologyConfig()
    manifests = job_mix(jobs, seed)
    wanted = {
        m["metadata"]["name"]: sum(t["replicas"] for t in m["spec"]["tasks"]) for m in manifests
    }
    async with ControlPlane() as plane, Client.from_control_plane(plane) as client:
        await install_crds(client)
        await plane.create_namespace(NAMESPACE)
        await create_simulated_cluster(client, shape, topology)

        created: dict[str, float] = {}
        jobs_bound = JobsBound(wanted, lambda pod: pod.metadata.labels.get(JOB_NAME_LABEL, ""))
        bound = jobs_bound.bound

        pods: Informer[Pod] = Informer(
            client, Pod, namespace=NAMESPACE, label_selector=JOB_NAME_LABEL
        )
        pods.add_event_handler(jobs_bound.on_pod, lambda _old, new: jobs_bound.on_pod(new), None)
        await pods.start()
        await pods.wait_for_sync()
        selector = f"{SIMULATED_LABEL}={shape.name_prefix}"
        async with running_operator(client, topology, namespace=NAMESPACE, node_selector=selector):
            gate = asyncio.Semaphore(concurrency)

            async def submit(data: dict[str, Any]) -> None:
                async with gate:
                    body = dict(data, metadata=dict(data["metadata"], namespace=NAMESPACE))
                    await client.create(body)
                    created[data["metadata"]["name"]] = time.perf_counter()

            started = time.perf_counter()
            async with asyncio.TaskGroup() as group:
                for index, data in enumerate(manifests):
                    if rate > 0:
                        await asyncio.sleep(max(0.0, started + index / rate - time.perf_counter()))
                    group.create_task(submit(data))
            with contextlib.suppress(TimeoutError):  # reported below as fewer placed jobs
                await asyncio.wait_for(jobs_bound.done.wait(), wait_s)
            finished = max(bound.values(), default=time.perf_counter())
        await pods.stop()

    latencies = [(bound[name] - created[name]) * 1000 for name in bound]
    return {
        "nodes": shape.nodes,
        "jobs": jobs,
        "pods": sum(wanted.values()),
        "placed": len(bound),
        **bind_latency_row(latencies),
        "jobs_per_s": round(len(bound) / (finished - started), 1) if bound else 0.0,
        "wall_s": round(finished - started, 2),
        "concurrency": concurrency,
        "rate": rate or "burst",
        "seed": seed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1024, help="a multiple of 16 (nodes per leaf)")
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16, help="job creates in flight")
    parser.add_argument(
        "--rate", type=float, default=0.0, help="jobs submitted per second (0: all at once)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--wait", type=float, default=300.0, help="seconds to wait for binding")
    parser.add_argument("--json", action="store_true", help="print only the JSON object")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs: must be at least 1")
    try:
        ClusterShape.with_about(args.nodes)
    except ValueError as error:
        parser.error(f"--nodes: {error}")
    result = asyncio.run(
        measure(args.nodes, args.jobs, args.concurrency, args.seed, args.wait, args.rate)
    )
    if args.json:
        print(json.dumps(result))
    else:
        print(json.dumps(result, indent=2))
    return 0 if result["placed"] == result["jobs"] else 1


if __name__ == "__main__":
    sys.exit(main())
