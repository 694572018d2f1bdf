"""What the mirror's "as if empty" twin costs, against building one per question: JSON on stdout.

`ClusterMirror.empty` answers whether a waiting gang could ever fit (every node empty). It is
kept as a second placer engine, fed node events only. The alternative is to build an empty
cluster from the mirror's nodes whenever a gang is explained. Per size this prints:

- ``build_ms``: building the twin from the mirror's nodes (what each explanation would pay
  without a kept twin; the scheduler explains every newly waiting gang);
- ``node_event_us``: one Node change through the mirror, with and without the twin built;
- ``twin_rss_mb``: the process's resident memory the twin adds;
- ``place_on_twin_ms``: one "could it ever fit" question on the kept twin.

    python benches/mirror_twin_bench.py --nodes 1024 10240
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import statistics
import time
from typing import Any

from crdkit.placer import Cluster
from crdkit.resources import Node
from crdkit.scheduling.mirror import ClusterMirror
from crdkit.testing.sim.nodes import GPU_NODE, simulated_node

LEVELS = ["topology.crdkit.io/spine", "topology.crdkit.io/leaf"]


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def _node(i: int, gpus: int = 8) -> Node:
    labels = {LEVELS[0]: f"s{i // 256}", LEVELS[1]: f"l{i // 16}"}
    return simulated_node(
        f"n{i:05}", labels=labels, allocatable={**GPU_NODE, "nvidia.com/gpu": gpus}
    )


def _event_us(mirror: ClusterMirror, nodes: list[Node], rounds: int) -> float:
    # Alternate each node between 8 and 4 GPUs: every call changes what the placer reads.
    changed = [_node(i, gpus=4) for i in range(rounds)]
    start = time.perf_counter()
    for i in range(rounds):
        mirror.set_node(changed[i])
        mirror.set_node(nodes[i])
    return (time.perf_counter() - start) / (2 * rounds) * 1e6


def measure(size: int, repeat: int) -> dict[str, Any]:
    nodes = [_node(i) for i in range(size)]
    mirror = ClusterMirror(LEVELS)
    for node in nodes:
        mirror.set_node(node)
    rounds = min(size, 500)
    without = _event_us(mirror, nodes, rounds)

    builds = []
    for _ in range(repeat):  # what `mirror.empty` does on first use, and each question without it
        start = time.perf_counter()
        Cluster(mirror.levels, list(mirror.nodes()))
        builds.append((time.perf_counter() - start) * 1e3)
    gc.collect()
    before = _rss_mb()
    twin = mirror.empty
    gc.collect()
    twin_mb = _rss_mb() - before
    with_twin = _event_us(mirror, nodes, rounds)

    gang = {
        "name": "whole-leaf",
        "topology": {"mode": "required", "level": LEVELS[1]},
        "tasks": [{"name": "w", "replicas": 16, "requests": {"nvidia.com/gpu": "8"}}],
    }
    compiled = twin.compile(gang)
    places = []
    for _ in range(repeat):
        start = time.perf_counter()
        twin.place(compiled)
        places.append((time.perf_counter() - start) * 1e3)
    return {
        "nodes": size,
        "build_ms": round(statistics.median(builds), 2),
        "node_event_us": {"without_twin": round(without, 1), "with_twin": round(with_twin, 1)},
        "twin_rss_mb": round(twin_mb, 1),
        "place_on_twin_ms": round(statistics.median(places), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1024, 10240])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(json.dumps({"sizes": [measure(size, args.repeat) for size in args.nodes]}, indent=2))


if __name__ == "__main__":
    main()
