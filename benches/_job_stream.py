"""The seeded job stream of benches/queue_sim_bench.py and benches/scheduler_compare.py: one
module, so that both benches draw the very same jobs for a seed.

Jobs of 1, 2, 4, 8 or 16 pods (35/30/20/10/5 %) of ``GPUS`` GPUs each, drawn until their pods
want ``load`` times the GPUs of ``nodes`` 8-GPU nodes; each runs 20-40 s (seeded).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import TypeVar

LEAF = "topology.crdkit.io/leaf"
NAMESPACE = "jobs"
GPUS = 8
SIZES = (1, 2, 4, 8, 16)
WEIGHTS = (35, 30, 20, 10, 5)


@dataclass
class Job:
    """A job of the stream and when its pods were bound; each bench adds what it tracks."""

    name: str
    pods: int
    seconds: float
    gpus: int = GPUS
    """GPUs per pod."""
    bound: set[str] = field(default_factory=set)
    first_bound: float | None = None
    all_bound: float | None = None


JobT = TypeVar("JobT", bound=Job)


def stream(
    job: type[JobT], nodes: int, load: float, seed: int, small_pods: bool = False
) -> list[JobT]:
    """The seeded job mix, as records of the class ``job``; with ``small_pods`` every single-pod
    job asks for 1, 2 or 4 GPUs (drawn) instead of a whole node, so capacity fragments inside
    nodes and leaves."""
    rng = random.Random(seed)
    jobs: list[JobT] = []
    wanted = load * nodes * GPUS
    total = 0
    while total < wanted:
        size = rng.choices(SIZES, WEIGHTS)[0]
        drawn = job(f"j{len(jobs):04d}", size, rng.uniform(20.0, 40.0))
        if small_pods and size == 1:
            drawn.gpus = rng.choice([1, 2, 4])
        jobs.append(drawn)
        total += size * drawn.gpus
    return jobs


HINT_STEP = 10.0
"""Run-time hints are rounded up to a multiple of this many seconds (see `hint_seconds`)."""


def hint_seconds(run_seconds: float) -> int:
    """The run-time bound a job declares with ``--hints``: its run time rounded up to the next
    ten seconds, an overestimate as users' time limits are."""
    return int(math.ceil(run_seconds / HINT_STEP) * HINT_STEP)


def percentile(values: list[float], share: float) -> float:
    """The value at ``share`` (0-1) of the sorted ``values``; 0.0 for none."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0
