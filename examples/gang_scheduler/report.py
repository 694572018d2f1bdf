"""Text output of the demo: live progress lines and the closing summary table.

Everything printed comes from objects read back from the apiserver (jobs, their status, their
pods), so the output shows what happened, not what was meant to happen.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from crdkit.scheduling import flex_table
from examples.gang_scheduler.models import Job


def format_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int | None = None,
    *,
    wrap: bool = False,
) -> str:
    """A plain-text table with columns as wide as their widest cell; with ``width``, the last
    column takes what the others leave of it: cut with an ellipsis, or with ``wrap``
    continued on lines of their own under it (``crdkit queue``'s table does the same)."""
    return "\n".join(flex_table(headers, rows, width or sys.maxsize, wrap=wrap, rule=True))


def constraint_text(job: Job) -> str:
    """``hard tier 1``, ``soft`` or ``none``: the job's network-topology constraint in brief."""
    network = job.spec.network_topology
    if network is None:
        return "none"
    if network.mode == "soft":
        return "soft"
    return f"hard tier {network.tier}"


def domain_text(job: Job) -> str:
    """The domain the job's pods were bound in (its narrowest label value), or ``-``."""
    placement = job.status.placement if job.status else None
    if placement is None:
        return "-"
    if placement.tier is None or not placement.domain_name:
        return "spans zones"
    return f"tier {placement.tier} {placement.domain_name}"


@dataclass(frozen=True)
class JobRow:
    """One line of the summary: a job as the apiserver last showed it, plus timings."""

    job: Job
    gpus: int
    pods_bound: int
    wait_s: float | None
    """Seconds from submission until its status recorded a placement (its minAvailable pods
    bound); None if that never happened."""

    def cells(self) -> list[str]:
        status = self.job.status
        phase = status.state.phase if status else "Pending"
        pods = sum(task.replicas for task in self.job.spec.tasks)
        reason = ""
        if status is not None and phase == "Pending":
            reason = next((c.message or "" for c in status.conditions if c.type == "Scheduled"), "")
        return [
            self.job.metadata.name or "?",
            f"{self.pods_bound}/{pods}",
            str(self.gpus),
            constraint_text(self.job),
            phase,
            domain_text(self.job),
            "-" if self.wait_s is None else f"{self.wait_s:.1f}s",
            reason,
        ]


SUMMARY_HEADERS = ("JOB", "PODS", "GPUS", "TOPOLOGY", "PHASE", "DOMAIN", "WAITED", "REASON")


def summary_table(rows: Sequence[JobRow], width: int | None = None, *, wrap: bool = True) -> str:
    """The closing table, one row per job in the order given; with ``width`` (the
    terminal's), its REASON column is wrapped to fit (``wrap=False``: cut)."""
    return format_table(SUMMARY_HEADERS, [row.cells() for row in rows], width, wrap=wrap)


def progress_line(elapsed_s: float, message: str) -> str:
    """One live progress line, stamped with seconds since the demo began."""
    return f"[{elapsed_s:6.1f}s] {message}"
