"""Placer benchmark: the Rust-backed `Cluster.place` against the pure-Python reference.

Usage: ``python benches/placer_bench.py --json [--quick]``. Prints one JSON object whose
``cases`` list has, per case, ``nodes``, ``gang_pods``, ``rust_p50_us``, ``rust_p99_us``,
``reference_p50_us`` and ``speedup`` (reference p50 / Rust p50), all measured in this run, and
the split of one Rust decision: ``search_p50_us`` (the `crdkit._placer.Engine.place` call on the
compiled gang, GIL released) and ``boundary_p50_us`` (the rest of the same `Cluster.place` call).

What is timed: ``Cluster.place(gang)`` end to end with a validated `Gang` model (compile the
gang, run the engine, build the `Placement`), the call a reconcile loop makes. The clusters:

- synthetic: 1,000, 10,000 and 50,000 nodes with 8 GPUs, 96 CPUs and 1536 GiB each, about half
  the GPUs used (each node uses 0-8, uniformly, fixed seed), four levels: zone > block > rack >
  host, 16 nodes per rack, 8 racks per block, 8 blocks per zone;
- alibaba: the 1,213 GPU nodes of Alibaba's cluster-trace-gpu-v2023 (benches/data), with a
  synthetic topology: pool (GPU model) > rack (16 consecutive nodes of a pool) > host, and
  about half of each node's GPUs used.

Gangs: 1, 16, 128 and 512 pods of one GPU, 4 CPUs and 32 GiB each, `preferred` at the rack
level, so the placer looks for the lowest level that holds them and climbs as needed.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from crdkit.placer import Cluster, Gang, ReferenceCluster

DATA = Path(__file__).parent / "data" / "openb_node_list_gpu_node.csv"
SYNTHETIC_TOPOLOGY = (
    "zone > block > rack > host; 16 nodes per rack, 8 racks per block, 8 blocks per zone; "
    "8 GPUs, 96 CPUs, 1536Gi per node; each node uses 0-8 GPUs (uniform, seed 7)"
)
ALIBABA_TOPOLOGY = (
    "pool (GPU model) > rack (16 consecutive nodes of a pool) > host; node capacity from the "
    "trace; each node uses 0..gpu GPUs (uniform, seed 7)"
)
LEVELS = ["bench.io/zone", "bench.io/block", "bench.io/rack"]


def synthetic(nodes: int) -> dict[str, Any]:
    rng = random.Random(7)
    result = []
    for index in range(nodes):
        rack, block, zone = index // 16, index // 128, index // 1024
        result.append(
            {
                "name": f"node-{index:05d}",
                "labels": {
                    "bench.io/zone": f"z{zone:02d}",
                    "bench.io/block": f"b{block:03d}",
                    "bench.io/rack": f"r{rack:04d}",
                },
                "allocatable": {"cpu": "96", "memory": "1536Gi", "pods": 110, "nvidia.com/gpu": 8},
                "used": {"nvidia.com/gpu": rng.randint(0, 8), "cpu": "8", "memory": "64Gi"},
            }
        )
    return {"levels": LEVELS, "nodes": result}


def alibaba() -> dict[str, Any]:
    rng = random.Random(7)
    with DATA.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    per_pool: dict[str, int] = {}
    nodes = []
    for row in rows:
        pool = row["model"]
        position = per_pool.get(pool, 0)
        per_pool[pool] = position + 1
        gpus = int(row["gpu"])
        nodes.append(
            {
                "name": row["sn"],
                "labels": {"bench.io/pool": pool, "bench.io/rack": f"{pool}-r{position // 16:03d}"},
                "allocatable": {
                    "cpu": f"{row['cpu_milli']}m",
                    "memory": f"{row['memory_mib']}Mi",
                    "pods": 110,
                    "nvidia.com/gpu": gpus,
                },
                "used": {"nvidia.com/gpu": rng.randint(0, gpus)},
            }
        )
    return {"levels": ["bench.io/pool", "bench.io/rack"], "nodes": nodes}


def gang(pods: int) -> Gang:
    return Gang.model_validate(
        {
            "name": f"train-{pods}",
            "topology": {"mode": "preferred", "level": "bench.io/rack"},
            "tasks": [
                {
                    "name": "worker",
                    "replicas": pods,
                    "requests": {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": 1},
                }
            ],
        }
    )


def timings_us(cluster: Cluster, the_gang: Gang, repetitions: int) -> list[float]:
    cluster.place(the_gang)  # warm up
    samples = []
    for _ in range(repetitions):
        start = time.perf_counter()
        cluster.place(the_gang)
        samples.append((time.perf_counter() - start) * 1e6)
    return samples


class _TimedEngine:
    """Forwards `place` to the Rust engine and keeps how long that raw call took."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.seconds = 0.0

    def place(self, compiled: Any, policy: str = "best-fit") -> Any:
        start = time.perf_counter()
        outcome = self.engine.place(compiled, policy)
        self.seconds = time.perf_counter() - start
        return outcome


def split_us(cluster: Cluster, the_gang: Gang, repetitions: int) -> dict[str, float]:
    """`Cluster.place` end to end, split into the engine call (search) and the rest (boundary:
    compile the gang, records, the `Placement`), both from the same calls."""
    engine = cluster._engine
    timed = _TimedEngine(engine)
    cluster._engine = timed  # type: ignore[assignment]
    search, boundary = [], []
    try:
        cluster.place(the_gang)  # warm up
        for _ in range(repetitions):
            start = time.perf_counter()
            cluster.place(the_gang)
            total = time.perf_counter() - start
            search.append(timed.seconds * 1e6)
            boundary.append((total - timed.seconds) * 1e6)
    finally:
        cluster._engine = engine
    return {
        "search_p50_us": round(statistics.median(search), 1),
        "boundary_p50_us": round(statistics.median(boundary), 1),
    }


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def run_case(
    name: str, snapshot: dict[str, Any], pods: int, rust_reps: int, reference_reps: int
) -> dict[str, Any]:
    the_gang = gang(pods)
    rust_cluster = Cluster.from_snapshot(snapshot)
    reference_cluster = ReferenceCluster.from_snapshot(snapshot)
    rust = timings_us(rust_cluster, the_gang, rust_reps)
    reference = timings_us(reference_cluster, the_gang, reference_reps)
    placement = rust_cluster.place(the_gang)
    if placement.to_dict() != reference_cluster.place(the_gang).to_dict():
        raise SystemExit(f"{name} {pods}: Rust and reference disagree")
    rust_p50 = statistics.median(rust)
    reference_p50 = statistics.median(reference)
    return {
        "cluster": name,
        "nodes": len(snapshot["nodes"]),
        "gang_pods": pods,
        "status": placement.status,
        "level": placement.level,
        "rust_p50_us": round(rust_p50, 1),
        "rust_p99_us": round(percentile(rust, 0.99), 1),
        "rust_repetitions": rust_reps,
        "reference_p50_us": round(reference_p50, 1),
        "reference_repetitions": reference_reps,
        "speedup": round(reference_p50 / rust_p50, 1),
        **split_us(rust_cluster, the_gang, rust_reps),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object (default)")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, for CI")
    args = parser.parse_args(argv)
    scale = 0.2 if args.quick else 1.0
    cases = []
    plans = [
        ("synthetic", 1_000, 200, 5),
        ("synthetic", 10_000, 100, 3),
        ("synthetic", 50_000, 30, 1),
    ]
    for name, nodes, rust_reps, reference_reps in plans:
        snapshot = synthetic(nodes)
        for pods in (1, 16, 128, 512):
            reps = max(5, int(rust_reps * scale))
            cases.append(run_case(name, snapshot, pods, reps, reference_reps))
            print(f"{name} {nodes} nodes, {pods} pods: done", file=sys.stderr)
    snapshot = alibaba()
    for pods in (1, 16, 128, 512):
        cases.append(run_case("alibaba", snapshot, pods, max(5, int(200 * scale)), 5))
    result = {
        "benchmark": "placer",
        "measures": "Cluster.place(Gang) end to end (compile, engine, Placement), microseconds",
        "gang": "N pods of 1 GPU, 4 CPUs, 32Gi each; topology preferred at the rack level",
        "topology": {"synthetic": SYNTHETIC_TOPOLOGY, "alibaba": ALIBABA_TOPOLOGY},
        "cases": cases,
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
