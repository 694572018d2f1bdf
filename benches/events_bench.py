"""Cost of recording one Event while many distinct Events are recent: JSON on stdout.

A gang scheduler records a FailedScheduling Event on every waiting pod, so its recorder holds
thousands of recent series. Before, each event scanned all of them to expire the stale; now it
looks at the oldest only. The recorder writes to the in-memory FakeCluster, so the figure is the
recorder's own cost plus the fake's, the same for every N.

    python benches/events_bench.py --recent 1000,10000 --events 2000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.runtime.events import EventRecorder
from crdkit.testing import FakeCluster


async def measure(recent: int, events: int) -> dict[str, Any]:
    cluster = FakeCluster()
    async with cluster.client() as client:
        recorder = EventRecorder(
            client, reporting_controller="bench.crdkit.io/events", reporting_instance="bench"
        )
        objects = [
            ConfigMap(metadata=ObjectMeta(name=f"p{i}", namespace="ns", uid=f"u{i}"))
            for i in range(recent)
        ]
        for obj in objects:  # distinct recent events: the recorder remembers each
            await recorder.event(obj, "Warning", "FailedScheduling", "no room")
        start = time.perf_counter()
        for i in range(events):  # repeats join a series (a PATCH each)
            await recorder.event(objects[i % recent], "Warning", "FailedScheduling", "no room")
        elapsed = time.perf_counter() - start
    return {
        "recent": recent,
        "events": events,
        "us_per_event": round(elapsed / events * 1e6, 1),
        "remembered": recorder.remembered,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--recent", default="1000,10000", help="distinct recent events, comma-separated"
    )
    parser.add_argument("--events", type=int, default=2000)
    args = parser.parse_args(argv)
    rows = [asyncio.run(measure(int(n), args.events)) for n in args.recent.split(",")]
    print(json.dumps({"bench": "events", "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
