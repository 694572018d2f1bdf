"""Smoke tests of the queues bench's live contestants on a real local control plane.

Kueue (benches/queues_kueue.py): Kueue v0.17.0 (built by tools/kueue-controller/build.sh, which
the bench runs itself; minutes when cold) and kube-scheduler run a 16-node cluster's stream at
half load with jobs a fifth of their length. crdkit (benches/queues_bench.py's
`run_crdkit_live`): ``crdkit scheduler --queues`` runs a 16-node cluster's stream with reclaims.
Every job must end, each after it arrived and was bound whole, team-c's gangs must be measured
from their arrival, and the figures must hold together. About a minute each once the peers
are built."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import Any

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


def load(name: str) -> Any:
    """benches/<name>.py as the module ``name`` (its dataclasses look their module up)."""
    spec = importlib.util.spec_from_file_location(name, BENCH.parent / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_crdkit_runs_the_queues_stream_live_to_the_end(tmp_path: Path) -> None:
    """``crdkit scheduler --queues`` as its own process on a 16-node cluster, at a load and
    job length that leave team-a and team-b borrowing when team-c arrives, so that reclaims
    happen: every job ends, each eviction is crdkit's preemption of a whole gang followed by
    one new attempt, and no gang is left partly bound. About two minutes."""
    bench = load("queues_bench")
    live = sys.modules["_queues_live"]
    stream = sys.modules["_queue_stream"]
    run = asyncio.run(
        bench.run_crdkit_live(16, 3, 2.0, workdir=tmp_path, timeout_s=240, time_scale=0.4)
    )
    assert run.errors == []
    assert run.start is not None
    assert (tmp_path / "crdkit-scheduler.log").exists()
    for job in run.jobs:
        assert job.arrived is not None
        assert job.arrived - run.start == pytest.approx(job.submit_at_s, abs=5.0)
        assert job.arrived <= job.all_bound < job.ended
    row = live.live_figures(run)
    assert row["jobs_done"] == row["jobs"]
    assert row["window_s"][0] == stream.RECLAIM_AT_S
    assert row["window_s"][1] > row["window_s"][0]  # all three teams competed for a while
    assert sum(row["share_pct"].values()) == pytest.approx(100.0, abs=0.5)
    assert row["reclaim_s"]["count"] >= 1
    assert row["admitted_not_placeable"] == 0
    assert row["victim_grace_s"] == 0.0
    assert 0 < row["useful_gpu_pct"] <= row["held_gpu_pct"] <= 100.5
    # Every eviction is crdkit's preemption of a whole gang (none rolled back), each followed by
    # one new attempt. A victim's pod normally bears crdkit's DisruptionTarget condition; one
    # that does not (``deleted``) must still have crdkit's Preempted Event.
    assert set(row["eviction_reasons"]) <= {"PreemptionByScheduler", "deleted"}
    assert row["evicted_jobs"] == sum(row["eviction_reasons"].values())
    assert "GangRolledBack" not in row["notes"]["events_by_reason"]
    for unmarked in row["notes"]["deleted_unmarked"]:
        assert any(said.startswith("Preempted:") for said in unmarked["events"]), unmarked
    attempts = sum(len(a) for a in run.attempts.values())
    assert attempts == len(run.jobs) + row["evicted_jobs"]
