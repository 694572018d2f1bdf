"""Placer benchmark: the Rust-backed `Cluster.place` against the pure-Python reference and Kueue.

Usage: ``python benches/placer_bench.py --json [--quick] [--no-kueue]``. Prints one JSON object,
all measured in this run:

- ``cases``: one per cluster and gang size, with ``cluster``, ``nodes``, ``gang_pods``,
  crdkit's answer (``status``, ``level``, ``domain``, ``nodes_used``), ``rust_p50_us``,
  ``rust_p99_us``, ``rust_repetitions``, ``reference_p50_us``, ``reference_repetitions``,
  ``reference_warm_up`` (whether an untimed call came first), ``speedup`` (reference p50 / Rust
  p50), and Kueue's: ``kueue_search_p50_us``, ``kueue_search_p99_us``,
  ``kueue_search_repetitions`` (its topology search alone, on a snapshot built once),
  ``kueue_with_snapshot_p50_us``, ``kueue_with_snapshot_p99_us``,
  ``kueue_snapshot_repetitions`` (its per-cycle ``Cache.Snapshot`` plus the search),
  ``kueue_found``, ``kueue_reason``, ``kueue_level``, ``kueue_domain``, ``kueue_nodes_used``,
  ``kueue_error`` and ``speedup_vs_kueue`` (Kueue search p50 / Rust p50). The ``kueue_*`` fields
  are null when Kueue did not run; ``kueue_error`` says why for one case. The split of one
  Rust decision: ``search_p50_us`` (the `crdkit._placer.Engine.place` call on the compiled gang,
  GIL released) and ``boundary_p50_us`` (the rest of the same `Cluster.place` call).
- ``kueue``: the peer itself: ``binary``, ``version``, ``go``, ``gomaxprocs``, ``input_mapping``
  and per cluster (``clusters``: ``setup_ms``, ``snapshot_p50_us``, ``non_tas_pods``,
  ``nodes_in_flavor``); or ``{"error": "..."}`` when it could not be built or run (the crdkit
  numbers are still reported).
- ``loadavg``: the machine's 1/5/15-minute load at the start and the end of the run.

What is timed for crdkit: ``Cluster.place(gang)`` end to end with a validated `Gang` model
(compile the gang, run the engine, build the `Placement`), the call a reconcile loop makes.
For Kueue (benches/kueue_tas, Go, built here by its build.sh into ~/.cache/crdkit/bench-bin and
skipped when up to date): Kueue v0.17.0's own ``TASFlavorSnapshot.FindTopologyAssignmentsForFlavor``
on the same cluster and gangs, the cluster's ``used`` given to Kueue as non-TAS pod usage
(benches/kueue_tas/README.md). The clusters:

- synthetic: 1,000, 10,000, 50,000 and 100,000 nodes with 8 GPUs, 96 CPUs and 1536 GiB each,
  about half the GPUs used (each node uses 0-8, uniformly, fixed seed), four levels: zone >
  block > rack > host, 16 nodes per rack, 8 racks per block, 8 blocks per zone (the reference
  runs once per gang at 50,000 and 100,000 nodes, without a warm-up at 100,000);
- alibaba: the 1,213 GPU nodes of Alibaba's cluster-trace-gpu-v2023 (benches/data), with a
  synthetic topology: pool (GPU model) > rack (16 consecutive nodes of a pool) > host, and
  about half of each node's GPUs used.

Gangs: 1, 16, 128 and 512 pods of one GPU, 4 CPUs and 32 GiB each, `preferred` at the rack
level, so the placer looks for the lowest level that holds them and climbs as needed (Kueue:
``kueue.x-k8s.io/podset-preferred-topology`` at the rack label). ``--quick`` leaves out the
100,000-node cluster and takes fewer repetitions, for smoke tests.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from crdkit.placer import Cluster, Gang, Placement, ReferenceCluster

sys.path.insert(0, str(Path(__file__).resolve().parent))

import go_peer

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
KUEUE_DIR = Path(__file__).parent / "kueue_tas"
KUEUE_RUN_TIMEOUT_S = 3600
KUEUE_MAPPING = (
    "Topology = crdkit levels + kubernetes.io/hostname (set to the node name); one "
    "corev1.Node per node (labels, status.allocatable, taints, unschedulable, Ready) via "
    "TASCache().SyncNode; used = one running non-TAS Pod bound to the node requesting exactly "
    "used (one pod slot), via TASCache().Update; one TAS ResourceFlavor and one ClusterQueue; "
    "each task a PodSet whose TopologyRequest comes from jobframework.NewPodSetTopologyRequest "
    "on the podset-preferred-topology annotation; search = "
    "TASFlavorSnapshot.FindTopologyAssignmentsForFlavor, snapshot = Cache.Snapshot"
)


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


def timings_us(
    cluster: Cluster, the_gang: Gang, repetitions: int, warm_up: bool = True
) -> tuple[list[float], Placement]:
    if warm_up:
        cluster.place(the_gang)
    samples = []
    for _ in range(repetitions):
        start = time.perf_counter()
        placement = cluster.place(the_gang)
        samples.append((time.perf_counter() - start) * 1e6)
    return samples, placement


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


def kueue_input(
    snapshot: dict[str, Any], gangs: list[Gang], search_repeats: int, snapshot_repeats: int
) -> dict[str, Any]:
    """The input document of benches/kueue_tas: the placement-io cluster and gangs as is."""
    return {
        "cluster": snapshot,
        "gangs": [g.model_dump(by_alias=True, mode="json") for g in gangs],
        "searchRepeats": search_repeats,
        "snapshotRepeats": snapshot_repeats,
    }


def build_kueue(script: Path = KUEUE_DIR / "build.sh") -> tuple[Path | None, str | None]:
    """Build (or find up to date) the Kueue peer; (binary, None) or (None, why not)."""
    return go_peer.build(script, "Kueue")


def run_kueue(binary: Path, document: dict[str, Any]) -> dict[str, Any]:
    """Run the Kueue peer on one input document; its JSON output, or {"error": ...}."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="kueue-tas-") as handle:
        json.dump(document, handle)
        handle.flush()
        try:
            done = subprocess.run(
                # The same niceness as this process, so both sides compete alike for the CPU.
                [str(binary), handle.name],
                capture_output=True,
                text=True,
                timeout=KUEUE_RUN_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return {"error": f"running the Kueue peer failed: {error}"}
    try:
        result = json.loads(done.stdout)
    except ValueError:
        tail = " | ".join(done.stderr.strip().splitlines()[-8:])
        return {"error": f"the Kueue peer exited {done.returncode} without JSON: {tail}"}
    if not isinstance(result, dict):
        return {"error": "the Kueue peer printed something other than a JSON object"}
    if done.returncode != 0 and "error" not in result:
        result = {"error": f"the Kueue peer exited {done.returncode}"}
    return result


KUEUE_FIELDS = (
    "kueue_search_p50_us",
    "kueue_search_p99_us",
    "kueue_search_repetitions",
    "kueue_with_snapshot_p50_us",
    "kueue_with_snapshot_p99_us",
    "kueue_snapshot_repetitions",
    "kueue_found",
    "kueue_reason",
    "kueue_level",
    "kueue_domain",
    "kueue_nodes_used",
    "kueue_error",
    "speedup_vs_kueue",
)


def kueue_fields(case: dict[str, Any], result: dict[str, Any] | None) -> dict[str, Any]:
    """The case's kueue_* fields from the peer's result for its gang (None: Kueue did not run)."""
    fields: dict[str, Any] = dict.fromkeys(KUEUE_FIELDS)
    if result is None:
        return fields
    if result.get("error"):
        fields["kueue_error"] = result["error"]
        return fields
    fields.update(
        kueue_search_p50_us=result["searchP50Us"],
        kueue_search_p99_us=result["searchP99Us"],
        kueue_search_repetitions=result["searchRepeats"],
        kueue_with_snapshot_p50_us=result["withSnapshotP50Us"],
        kueue_with_snapshot_p99_us=result["withSnapshotP99Us"],
        kueue_snapshot_repetitions=result["snapshotRepeats"],
        kueue_found=result["found"],
        kueue_reason=result.get("reason") or None,
        kueue_level=result["level"],
        kueue_domain=result["domain"],
        kueue_nodes_used=result["nodesUsed"],
        speedup_vs_kueue=round(result["searchP50Us"] / case["rust_p50_us"], 1),
    )
    return fields


def run_case(
    name: str,
    snapshot: dict[str, Any],
    pods: int,
    rust_reps: int,
    reference_reps: int,
    reference_warm_up: bool = True,
) -> dict[str, Any]:
    the_gang = gang(pods)
    rust_cluster = Cluster.from_snapshot(snapshot)
    reference_cluster = ReferenceCluster.from_snapshot(snapshot)
    rust, placement = timings_us(rust_cluster, the_gang, rust_reps)
    reference, reference_placement = timings_us(
        reference_cluster, the_gang, reference_reps, reference_warm_up
    )
    if placement.to_dict() != reference_placement.to_dict():
        raise SystemExit(f"{name} {pods}: Rust and reference disagree")
    rust_p50 = statistics.median(rust)
    reference_p50 = statistics.median(reference)
    return {
        "cluster": name,
        "nodes": len(snapshot["nodes"]),
        "gang_pods": pods,
        "status": placement.status,
        "level": placement.level,
        "domain": placement.domain,
        "nodes_used": len({a.node for a in placement.assignments}),
        "rust_p50_us": round(rust_p50, 1),
        "rust_p99_us": round(percentile(rust, 0.99), 1),
        "rust_repetitions": rust_reps,
        "reference_p50_us": round(reference_p50, 1),
        "reference_repetitions": reference_reps,
        "reference_warm_up": reference_warm_up,
        "speedup": round(reference_p50 / rust_p50, 1),
        **split_us(rust_cluster, the_gang, rust_reps),
    }


def kueue_cluster(
    binary: Path | None,
    snapshot: dict[str, Any],
    gang_sizes: tuple[int, ...],
    search_reps: int,
    snapshot_reps: int,
) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
    """Run Kueue on one cluster: (its cluster-level result, per-gang results or None)."""
    if binary is None:
        return {}, None
    document = kueue_input(snapshot, [gang(p) for p in gang_sizes], search_reps, snapshot_reps)
    result = run_kueue(binary, document)
    if "error" in result:
        return result, [{"error": result["error"]}] * len(gang_sizes)
    gangs = result.pop("gangs")
    return result, gangs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object (default)")
    parser.add_argument("--quick", action="store_true", help="smaller and fewer repetitions")
    parser.add_argument("--no-kueue", action="store_true", help="do not build or run Kueue")
    args = parser.parse_args(argv)
    scale = 0.2 if args.quick else 1.0
    loadavg_start = [round(v, 2) for v in os.getloadavg()]

    kueue: dict[str, Any] = {}
    binary: Path | None = None
    if not args.no_kueue:
        binary, error = build_kueue()
        if error:
            kueue = {"error": error}
            print(error, file=sys.stderr)
        else:
            kueue = {"binary": str(binary), "input_mapping": KUEUE_MAPPING, "clusters": {}}

    # (name, nodes, Rust reps, reference reps, reference warm-up, Kueue search reps,
    # Kueue snapshot reps); nodes None is the Alibaba trace.
    plans: list[tuple[str, int | None, int, int, bool, int, int]] = [
        ("synthetic", 1_000, 200, 5, True, 100, 20),
        ("synthetic", 10_000, 100, 3, True, 30, 10),
        ("synthetic", 50_000, 30, 1, True, 10, 5),
        ("synthetic", 100_000, 20, 1, False, 5, 3),
        ("alibaba", None, 200, 5, True, 100, 20),
    ]
    if args.quick:
        plans = [plan for plan in plans if plan[1] != 100_000]
    gang_sizes = (1, 16, 128, 512)
    cases = []
    for name, nodes, rust_reps, reference_reps, warm_up, search_reps, snapshot_reps in plans:
        snapshot = synthetic(nodes) if nodes is not None else alibaba()
        size = len(snapshot["nodes"])
        cluster_cases = []
        for pods in gang_sizes:
            reps = max(5, int(rust_reps * scale))
            cluster_cases.append(run_case(name, snapshot, pods, reps, reference_reps, warm_up))
            print(f"{name} {size} nodes, {pods} pods: done", file=sys.stderr)
        cluster_result, gang_results = kueue_cluster(
            binary,
            snapshot,
            gang_sizes,
            max(3, int(search_reps * scale)),
            max(2, int(snapshot_reps * scale)),
        )
        if binary is not None:
            print(f"{name} {size} nodes: Kueue done", file=sys.stderr)
            kueue["clusters"][f"{name}-{size}"] = {
                "error": cluster_result.get("error"),
                "setup_ms": cluster_result.get("setupMs"),
                "snapshot_p50_us": cluster_result.get("snapshotP50Us"),
                "non_tas_pods": cluster_result.get("nonTasPods"),
                "nodes_in_flavor": cluster_result.get("nodesInFlavor"),
            }
            for key, field in (("version", "kueue"), ("go", "go"), ("gomaxprocs", "gomaxprocs")):
                if field in cluster_result:
                    kueue[key] = cluster_result[field]
        for index, case in enumerate(cluster_cases):
            result = gang_results[index] if gang_results is not None else None
            case.update(kueue_fields(case, result))
            cases.append(case)
    result = {
        "benchmark": "placer",
        "measures": (
            "Cluster.place(Gang) end to end (compile, engine, Placement), microseconds; "
            "Kueue: its TAS search alone, and with its per-cycle snapshot"
        ),
        "gang": "N pods of 1 GPU, 4 CPUs, 32Gi each; topology preferred at the rack level",
        "topology": {"synthetic": SYNTHETIC_TOPOLOGY, "alibaba": ALIBABA_TOPOLOGY},
        "kueue": kueue if not args.no_kueue else {"error": "not run (--no-kueue)"},
        "loadavg": {"start": loadavg_start, "end": [round(v, 2) for v in os.getloadavg()]},
        "cases": cases,
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
