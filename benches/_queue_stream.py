"""The shared GPU cluster of benches/queues_bench.py: three teams, their quotas and their jobs,
and the figures every contestant's run is judged by. One module, so that crdkit (simulated and
live) and Kueue run the very same jobs against the very same quotas for a seed.

The cluster has ``nodes`` 8-GPU nodes. The teams sit in one cohort (``org``):

- ``team-a`` and ``team-b`` are each guaranteed a quarter of the GPUs, with weight 1;
- ``team-c`` is guaranteed a quarter too, with weight 2;
- the last quarter is the cohort's own, lent to whoever wants it.

With all three saturated, the surplus (the cohort's quarter) is split by weight 1:1:2, so the
fair shares of the cluster's GPUs are 31.25 %, 31.25 % and 37.5 % (`fair_shares`).

``team-a`` and ``team-b`` submit their jobs at once at the start and borrow everything
``team-c`` leaves idle; ``team-c`` submits its jobs ``RECLAIM_AT_S`` seconds later, when the
cluster is full of borrowers, so the first of its gangs measure reclaim: from arriving under
its nominal quota to being bound. Each team's jobs are the seeded mix of
``benches/_job_stream.py`` (1-16 pods of 8 GPUs, 20-40 s each), drawn until they want ``load``
times the cluster's GPUs, with the team's own seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from _job_stream import GPUS, percentile
from _job_stream import Job as StreamJob
from _job_stream import stream as job_stream

COHORT = "org"
RECLAIM_AT_S = 30.0
"""When ``team-c`` submits its jobs, seconds after the others."""


@dataclass(frozen=True)
class Team:
    name: str
    weight: float
    quarter: bool = True
    """Guaranteed a quarter of the cluster's GPUs."""
    submit_at_s: float = 0.0


TEAMS = (
    Team("team-a", 1.0),
    Team("team-b", 1.0),
    Team("team-c", 2.0, submit_at_s=RECLAIM_AT_S),
)


def nominal_gpus(nodes: int) -> int:
    """Each team's guaranteed GPUs, and the cohort's own: a quarter of the cluster each."""
    return nodes * GPUS // 4


def fair_shares(nodes: int) -> dict[str, float]:
    """Each team's share of the cluster's GPUs (0-1) while all three are saturated: its nominal
    quota plus the cohort's surplus split by weight."""
    total = nodes * GPUS
    weights = sum(team.weight for team in TEAMS)
    surplus = total - nominal_gpus(nodes) * len(TEAMS)
    return {
        team.name: (nominal_gpus(nodes) + surplus * team.weight / weights) / total for team in TEAMS
    }


@dataclass
class TeamJob(StreamJob):
    """A job of one team's stream."""

    team: str = ""
    submit_at_s: float = 0.0
    arrived: float | None = None
    """When it was submitted (the clock of the run)."""
    ended: float | None = None
    """When its last pod ended."""


def queue_stream(nodes: int, load: float, seed: int) -> list[TeamJob]:
    """Every team's jobs, named ``<team>-jNNNN``, in submit order within each team."""
    jobs: list[TeamJob] = []
    for index, team in enumerate(TEAMS):
        for job in job_stream(TeamJob, nodes, load, seed * 101 + index):
            job.name = f"{team.name}-{job.name}"
            job.team = team.name
            job.submit_at_s = team.submit_at_s
            jobs.append(job)
    return jobs


@dataclass(frozen=True)
class Span:
    """One job's hold on GPUs: from all its pods bound to its end."""

    team: str
    gpus: int
    start: float
    end: float


def spans(jobs: list[TeamJob]) -> list[Span]:
    """The GPU holds of the jobs that ran whole."""
    return [
        Span(job.team, job.pods * job.gpus, job.all_bound, job.ended)
        for job in jobs
        if job.all_bound is not None and job.ended is not None
    ]


def saturated_window(jobs: list[TeamJob], t0: float) -> tuple[float, float]:
    """From ``team-c``'s submit (``t0`` is the run's start) to the first time a team has no job
    left waiting: the stretch in which every team wants more than it holds."""
    start = t0 + RECLAIM_AT_S
    last_start: dict[str, float] = {}
    for job in jobs:
        if job.all_bound is not None:
            last_start[job.team] = max(last_start.get(job.team, start), job.all_bound)
    end = min(last_start.values(), default=start)
    return start, max(start, end)


def gpu_time_shares(held: list[Span], window: tuple[float, float]) -> dict[str, float]:
    """Each team's share (0-1) of the GPU-seconds held by whole jobs inside ``window``."""
    start, end = window
    seconds: dict[str, float] = {team.name: 0.0 for team in TEAMS}
    for span in held:
        overlap = min(span.end, end) - max(span.start, start)
        if overlap > 0:
            seconds[span.team] += overlap * span.gpus
    total = sum(seconds.values())
    return {team: (value / total if total else 0.0) for team, value in seconds.items()}


def useful_gpu_pct(held: list[Span], window: tuple[float, float], nodes: int) -> float:
    """The mean share (%) of the cluster's GPUs held by whole jobs inside ``window``."""
    start, end = window
    if end <= start:
        return 0.0
    seconds = sum(
        max(0.0, min(span.end, end) - max(span.start, start)) * span.gpus for span in held
    )
    return 100.0 * seconds / ((end - start) * nodes * GPUS)


def reclaim_latencies(jobs: list[TeamJob], nodes: int) -> list[float]:
    """For ``team-c``'s gangs that arrived under its nominal quota (taken in submit order while
    their GPUs add up to at most the quota), arrival to all pods bound, in seconds."""
    out: list[float] = []
    room = nominal_gpus(nodes)
    for job in jobs:
        if job.team != TEAMS[2].name:
            continue
        gpus = job.pods * job.gpus
        if gpus > room:
            break
        room -= gpus
        if job.arrived is not None and job.all_bound is not None:
            out.append(job.all_bound - job.arrived)
    return out


def stream_figures(
    nodes: int,
    jobs: list[TeamJob],
    held: list[Span],
    useful: list[Span],
    start: float,
    *,
    evicted: int,
    admitted_not_placeable: int,
    victim_grace_s: float,
) -> dict[str, Any]:
    """One run judged (see benches/queues_bench.py's docstring for each figure): written once,
    so that the simulated runs and the live contestants are judged alike. ``held`` are every
    attempt's whole holds (evicted ones too), ``useful`` those of the attempts that ran to
    their end; times are on the run's clock, ``start`` its t=0."""
    window = saturated_window(jobs, start)
    shares = gpu_time_shares(held, window)
    fair = fair_shares(nodes)
    latencies = reclaim_latencies(jobs, nodes)
    ended = [job.ended for job in jobs if job.ended is not None]
    return {
        "share_pct": {team: round(100 * value, 1) for team, value in shares.items()},
        "fair_share_pct": {team: round(100 * value, 1) for team, value in fair.items()},
        "share_gap_max_pts": round(max(abs(100 * (shares[t] - fair[t])) for t in fair), 1),
        "window_s": [round(window[0] - start, 1), round(window[1] - start, 1)],
        "reclaim_s": {
            "p50": round(percentile(latencies, 0.5), 1),
            "max": round(max(latencies, default=0.0), 1),
            "count": len(latencies),
        },
        "victim_grace_s": victim_grace_s,
        "useful_gpu_pct": round(useful_gpu_pct(useful, window, nodes), 1),
        "held_gpu_pct": round(useful_gpu_pct(held, window, nodes), 1),
        "evicted_jobs": evicted,
        "admitted_not_placeable": admitted_not_placeable,
        # A live run cut short by its timeout has jobs that never ended: no makespan then.
        "makespan_s": round(max(ended) - start, 1) if len(ended) == len(jobs) else None,
    }
