"""``make demo``: the gang scheduler on a simulated GPU cluster, served by a local control plane.

    python -m examples.demo [--out DIR] [--zones N] [--spines-per-zone N] ...

It starts kube-apiserver and etcd, registers the simulated cluster's Node objects, reads the
cluster back from the API, draws the topology picture (each job's GPUs coloured) and prints a
summary, then stops the control plane. Every line it prints comes from the apiserver's answers.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import Counter
from pathlib import Path

from crdkit.client import Client
from crdkit.testing import ControlPlane
from examples.gang_scheduler.cluster_setup import create_simulated_cluster, read_picture_data
from examples.gang_scheduler.picture import render
from examples.gang_scheduler.report import format_table, progress_line
from examples.gang_scheduler.simulated_cluster import ClusterShape
from examples.gang_scheduler.topology import TopologyConfig


class Progress:
    """Prints progress lines stamped with the seconds since the demo began."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def say(self, message: str) -> None:
        print(progress_line(time.monotonic() - self.started, message), flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m examples.demo", description=__doc__.splitlines()[0]
    )
    defaults = ClusterShape()
    parser.add_argument("--out", type=Path, default=Path("demo-output"), help="where the PNG goes")
    parser.add_argument("--zones", type=int, default=defaults.zones)
    parser.add_argument("--spines-per-zone", type=int, default=defaults.spines_per_zone)
    parser.add_argument("--leaves-per-spine", type=int, default=defaults.leaves_per_spine)
    parser.add_argument("--nodes-per-leaf", type=int, default=defaults.nodes_per_leaf)
    parser.add_argument(
        "--tier-label",
        action="append",
        default=[],
        metavar="KEY",
        help="node label of tier 1 (leaf), then 2 (spine), then 3 (zone); repeat in that order",
    )
    return parser.parse_args(argv)


async def run(args: argparse.Namespace) -> int:
    progress = Progress()
    topology = TopologyConfig.from_flags(args.tier_label)
    shape = ClusterShape(
        zones=args.zones,
        spines_per_zone=args.spines_per_zone,
        leaves_per_spine=args.leaves_per_spine,
        nodes_per_leaf=args.nodes_per_leaf,
    )
    progress.say("starting the local control plane (etcd + kube-apiserver)")
    async with ControlPlane() as plane:
        progress.say(f"control plane ready at {plane.server_url}")
        async with Client.from_control_plane(plane) as client:
            created = await create_simulated_cluster(client, shape, topology)
            progress.say(f"registered {created} simulated nodes ({shape.gpus} GPUs)")
            cells, usage = await read_picture_data(client, shape, topology)
            progress.say(f"read back {len(cells)} nodes from the apiserver")
        leaves = Counter((cell.zone, cell.spine, cell.leaf) for cell in cells)
        rdma = {cell.leaf for cell in cells if cell.rdma}
        rows = [
            [
                zone,
                spine,
                leaf,
                str(count),
                str(sum(c.gpus for c in cells if c.leaf == leaf)),
                "yes" if leaf in rdma else "no",
            ]
            for (zone, spine, leaf), count in sorted(leaves.items())
        ]
        print()
        print(format_table(("ZONE", "SPINE", "LEAF", "NODES", "GPUS", "RDMA"), rows))
        print()
        jobs = sorted({entry.job for entries in usage.values() for entry in entries})
        path = render(cells, usage, jobs, args.out / "topology.png", "simulated GPU cluster")
        progress.say(f"topology picture: {path.resolve()}")
        progress.say("stopping the control plane")
    progress.say("control plane stopped")
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        return asyncio.run(run(parse_args(argv)))
    except KeyboardInterrupt:
        print("interrupted; the control plane was stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
