"""Smoke test of benches/queue_sim_bench.py: a 32-node cluster, one seed, both variants; the
JSON has every figure docs/performance.md and benches/RESULTS.md record, and the figures hold
together."""

from __future__ import annotations

import pytest
from _benches import bench_json

TINY = ["--nodes", "32", "--seeds", "3"]


def test_a_tiny_run_reports_every_figure(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    result = bench_json("queue_sim_bench", TINY, monkeypatch, capsys)
    assert {run["variant"] for run in result["runs"]} == {"reservations", "no-reservations"}
    for run in result["runs"]:
        assert run["makespan_s"] >= run["lower_bound_s"] > 0
        assert 0 < run["gpu_in_bound_jobs_pct"] <= 100
        assert run["leaf_jobs_in_one_leaf_pct"] == 100.0
        assert run["partly_bound_max_s"] < 1.0  # binds are instant on the fake cluster
        assert set(run["wait_by_size"]) == {"1", "2", "4", "8", "16"}


def test_each_policy_runs_the_same_stream(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = [*TINY, "--variants", "no-reservations", "--policies", "best-fit,keep-whole"]
    result = bench_json("queue_sim_bench", [*args, "--small-pods"], monkeypatch, capsys)
    assert [run["policy"] for run in result["runs"]] == ["best-fit", "keep-whole"]
    assert len({run["pods"] for run in result["runs"]}) == 1  # the very same stream
    assert set(result["summary"]) == {"no-reservations/best-fit", "no-reservations/keep-whole"}
    assert result["small_pods"] is True


def test_the_no_settling_variant_and_the_end_spread_are_reported(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = [*TINY, "--variants", "no-settling", "--end-spread", "0.2"]
    result = bench_json("queue_sim_bench", args, monkeypatch, capsys)
    assert result["end_spread_s"] == 0.2
    assert [run["variant"] for run in result["runs"]] == ["no-settling"]
    assert result["runs"][0]["makespan_s"] >= result["runs"][0]["lower_bound_s"]
