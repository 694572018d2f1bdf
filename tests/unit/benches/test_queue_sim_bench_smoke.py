"""Smoke test of benches/queue_sim_bench.py: a 32-node cluster, one seed, both variants; the
JSON has every figure docs/performance.md and benches/RESULTS.md record, and the figures hold
together."""

from __future__ import annotations

import json
import sys

import pytest
from _benches import load_bench


def test_a_tiny_run_reports_every_figure(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = load_bench("queue_sim_bench")
    monkeypatch.setattr(sys, "argv", ["queue_sim_bench", "--nodes", "32", "--seeds", "3"])
    module.main()
    result = json.loads(capsys.readouterr().out)
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
    module = load_bench("queue_sim_bench")
    argv = ["queue_sim_bench", "--nodes", "32", "--seeds", "3", "--variants", "no-reservations"]
    argv += ["--policies", "best-fit,keep-whole", "--small-pods"]
    monkeypatch.setattr(sys, "argv", argv)
    module.main()
    result = json.loads(capsys.readouterr().out)
    assert [run["policy"] for run in result["runs"]] == ["best-fit", "keep-whole"]
    assert len({run["pods"] for run in result["runs"]}) == 1  # the very same stream
    assert set(result["summary"]) == {"no-reservations/best-fit", "no-reservations/keep-whole"}
    assert result["small_pods"] is True


def test_the_no_settling_variant_and_the_end_spread_are_reported(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = load_bench("queue_sim_bench")
    argv = ["queue_sim_bench", "--nodes", "32", "--seeds", "3", "--variants", "no-settling"]
    monkeypatch.setattr(sys, "argv", [*argv, "--end-spread", "0.2"])
    module.main()
    result = json.loads(capsys.readouterr().out)
    assert result["end_spread_s"] == 0.2
    assert [run["variant"] for run in result["runs"]] == ["no-settling"]
    assert result["runs"][0]["makespan_s"] >= result["runs"][0]["lower_bound_s"]
