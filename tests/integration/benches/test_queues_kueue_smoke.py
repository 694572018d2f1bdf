"""Smoke test of benches/queues_kueue.py on a real local control plane: Kueue v0.17.0 (built by
tools/kueue-controller/build.sh, which the bench runs itself; minutes when cold) and
kube-scheduler run a 16-node cluster's stream at half load with jobs a fifth of their length.
Every job must end, each after it arrived and was bound whole, team-c's gangs must be measured
from their arrival, and the figures must hold together. About a minute once the peers are
built."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "benches" / "queues_kueue.py"
# A cold build of Kueue takes minutes on two cores; the limit only guards against a hang.
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(1800)]


def test_kueue_runs_the_queues_stream_to_the_end(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("queues_kueue", BENCH)
    assert spec is not None
    assert spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # its dataclasses look their module up
    spec.loader.exec_module(bench)
    stream = sys.modules["_queue_stream"]  # which the bench imports from benches/
    run = asyncio.run(bench.run_kueue(16, 3, 0.5, workdir=tmp_path, timeout_s=150, time_scale=0.2))
    assert run.errors == []
    assert run.versions["kueue"]["kueue"] == "v0.17.0"
    assert run.start is not None
    assert all(job.ended is not None and job.all_bound is not None for job in run.jobs)
    for job in run.jobs:
        # team-c arrives RECLAIM_AT_S after the others, and no job is bound before it arrives.
        assert job.arrived is not None
        assert job.arrived - run.start == pytest.approx(job.submit_at_s, abs=5.0)
        assert job.arrived <= job.all_bound < job.ended
    row = bench.seed_figures(run)
    assert row["jobs_done"] == row["jobs"]
    # Jobs this short leave team-a and team-b little or nothing waiting when team-c arrives:
    # the saturated window may be empty, and then no team has a share of it.
    start, end = row["window_s"]
    assert start == stream.RECLAIM_AT_S
    assert sum(row["shares"].values()) == pytest.approx(1.0 if end > start else 0.0, abs=1e-3)
    assert row["fair_shares"] == {
        team: round(share, 4) for team, share in stream.fair_shares(16).items()
    }
    assert 0 <= row["useful_gpu_pct"] <= 100
    assert row["reclaim_s"]["gangs"] >= 1
    assert row["admitted_not_placeable"] >= 0
    assert sum(row["eviction_reasons"].values()) == sum(row["evictions"].values())
    assert row["attempts"] == len(run.jobs) + sum(row["evictions"].values())
