"""What the scheduler's page costs per update at 1,024 nodes: the bytes of the event stream's
first event (the snapshot whole) and of a typical delta, and the time to compute and encode a
delta.

Usage: ``python benches/ui_update_bench.py [--nodes 1024] [--updates 200] [--fraction 0.05]``.
Prints one JSON object, all measured in this run:

- ``full_event_bytes``: the first ``event: full`` as the server writes it;
- ``delta_event_bytes_p50``, ``delta_event_bytes_p99``: the ``event: delta`` of one update,
  over ``updates`` updates in which about ``fraction`` of the nodes change each (a busy
  second: jobs end and start, reservations move; the gangs' list changes every time);
- ``delta_nodes_p50``: nodes a delta carries; ``delta_gangs_bytes_p50``: of a delta's bytes,
  the gangs' list (sent whole when it changed, which is nearly every busy second);
- ``delta_compute_us_p50``, ``_p99``: `crdkit.scheduling.ui.delta.delta` alone;
- ``delta_encode_us_p50``, ``_p99``: the same delta made into its event (JSON);
- ``full_encode_us_p50``: the full event's encoding, for comparison.

The snapshots are `crdkit.scheduling.ui.preview`'s made-up cluster (16 nodes to a leaf, 4
leaves to a spine, 4 spines to a zone, 8 GPUs each, about two thirds busy), not a live
scheduler's; the scheduler's CPU with a page open is measured on a live one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from crdkit.scheduling.ui.delta import delta
from crdkit.scheduling.ui.preview import step, synthetic_snapshot
from crdkit.scheduling.ui.server import _encode, _event


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--updates", type=int, default=200)
    parser.add_argument("--fraction", type=float, default=0.05)
    args = parser.parse_args()

    snapshot = synthetic_snapshot(args.nodes, seed=1)
    # Warm the timeline to the scheduler's window first: a delta's size should not depend on
    # how young the page's server is.
    for index in range(300):
        snapshot = step(snapshot, seed=10_000 + index, fraction=args.fraction)
    full_started = time.perf_counter()
    full = _event("full", snapshot["seq"], _encode(snapshot))
    full_encode = time.perf_counter() - full_started

    sizes: list[float] = []
    nodes: list[float] = []
    gangs: list[float] = []
    compute: list[float] = []
    encode: list[float] = []
    for index in range(args.updates):
        new = step(snapshot, seed=index, fraction=args.fraction)
        started = time.perf_counter()
        change = delta(snapshot, new)
        computed = time.perf_counter()
        assert change is not None, "the node set does not change between updates"
        event = _event("delta", new["seq"], _encode(change))
        encoded = time.perf_counter()
        compute.append((computed - started) * 1e6)
        encode.append((encoded - computed) * 1e6)
        sizes.append(len(event))
        nodes.append(len(change.get("nodes", [])))
        gangs.append(len(_encode(change.get("gangs", []))))
        snapshot = new

    print(
        json.dumps(
            {
                "nodes": args.nodes,
                "updates": args.updates,
                "fraction": args.fraction,
                "full_event_bytes": len(full),
                "full_encode_us_p50": round(full_encode * 1e6),
                "delta_event_bytes_p50": round(statistics.median(sizes)),
                "delta_event_bytes_p99": round(_p(sizes, 0.99)),
                "delta_nodes_p50": statistics.median(nodes),
                "delta_gangs_bytes_p50": round(statistics.median(gangs)),
                "delta_compute_us_p50": round(statistics.median(compute), 1),
                "delta_compute_us_p99": round(_p(compute, 0.99), 1),
                "delta_encode_us_p50": round(statistics.median(encode), 1),
                "delta_encode_us_p99": round(_p(encode, 0.99), 1),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
