"""How long binds took, seen and summarized the same way by the end-to-end benches
(benches/gang_e2e_bench.py and benches/scheduling_bench.py ``e2e``), so that their rows compare.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Mapping, Sequence

from crdkit.resources import Pod


class JobsBound:
    """When the last pod of each job was seen bound, from an informer's pod events; ``done``
    is set once every job is. ``sizes``: each job's pod count; ``job_of``: a pod's job."""

    def __init__(self, sizes: Mapping[str, int], job_of: Callable[[Pod], str]) -> None:
        self.sizes = sizes
        self.job_of = job_of
        self.bound: dict[str, float] = {}
        self.done = asyncio.Event()
        self._seen: dict[str, set[str]] = {}

    def on_pod(self, pod: Pod) -> None:
        job = self.job_of(pod)
        if not pod.spec.node_name or job not in self.sizes or job in self.bound:
            return
        self._seen.setdefault(job, set()).add(pod.metadata.name or "")
        if len(self._seen[job]) == self.sizes[job]:
            self.bound[job] = time.perf_counter()
            if len(self.bound) == len(self.sizes):
                self.done.set()


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(fraction * len(ordered) + 0.5)))
    return ordered[rank - 1]


def bind_latency_row(latencies_ms: Sequence[float]) -> dict[str, float | None]:
    """Median, 99th percentile and worst of ``latencies_ms`` (None each when there are none)."""
    if not latencies_ms:
        return {"bind_p50_ms": None, "bind_p99_ms": None, "bind_max_ms": None}
    return {
        "bind_p50_ms": round(statistics.median(latencies_ms), 1),
        "bind_p99_ms": round(percentile(latencies_ms, 0.99), 1),
        "bind_max_ms": round(max(latencies_ms), 1),
    }
