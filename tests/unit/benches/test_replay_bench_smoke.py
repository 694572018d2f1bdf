"""Smoke test of benches/replay_bench.py: the trace's synthesis, and a slice of the stream
(860 jobs with gangs of 2, 4 and 8 pods) replayed on the first 8 leaves, where jobs queue;
the JSON has every figure docs/performance.md and benches/RESULTS.md record, and the figures
hold together."""

from __future__ import annotations

import json
import sys
from types import ModuleType
from typing import Any

import pytest
from _benches import load_bench

CONTESTANT_KEYS = {
    "makespan_s",
    "last_start_s",
    "wait_p50_s",
    "wait_p99_s",
    "wait_max_s",
    "wait_by_size",
    "free_leaves_mean",
    "free_leaves_mean_while_waiting",
    "multi_pod_jobs",
    "multi_pod_in_one_leaf",
    "multi_pod_in_one_leaf_pct",
    "leaf_required_jobs",
    "leaf_required_in_one_leaf",
    "gpu_util_pct",
    "gpu_util_while_waiting_pct",
    "queue_mean",
    "queue_max",
    "waiting_time_pct",
    "jobs_placed",
    "place_calls",
    "run_s",
}


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("replay_bench")


@pytest.fixture(scope="module")
def result(bench: ModuleType) -> dict[str, Any]:
    return bench.run(["--skip", "1830", "--jobs", "860", "--leaves", "8", "--time-scale", "2e4"])


def test_the_fleet_and_the_jobs_come_from_the_trace_in_the_repository(bench: ModuleType) -> None:
    assert bench.PODS_CSV.parent == bench.NODES_CSV.parent  # benches/data, never ../shared
    nodes = bench.fleet()
    assert len(nodes) == 617
    assert {node.gpu for node in nodes} == {8}
    assert [node.name for node in nodes] == sorted(node.name for node in nodes)
    assert [node.leaf for node in nodes[:9]] == [0] * 8 + [1]
    assert nodes[128].spine == 1
    jobs, dropped = bench.trace_jobs(20000, 7)
    assert dropped == {"no_gpu": 1088, "non_positive_duration": 1}
    assert sum(job.pods for job in jobs) == 7063  # every GPU row but the dropped one
    gangs = [job for job in jobs if job.gpus == 8]
    assert sum(job.pods for job in gangs) == 44  # the trace's 8-GPU rows, each once
    assert {job.pods for job in gangs} <= set(bench.GANG_SIZES)
    assert all((job.mode == "required") == (job.pods >= 4) for job in jobs)
    assert all(sum(n for _, _, n in job.tasks) == job.pods for job in jobs)
    assert [job.arrival for job in jobs] == sorted(job.arrival for job in jobs)
    again, _ = bench.trace_jobs(20000, 7)
    assert again == jobs  # seeded
    other, _ = bench.trace_jobs(20000, 8)
    assert [j.pods for j in other if j.gpus == 8] != [j.pods for j in gangs]


def test_first_fit_takes_the_first_node_and_the_first_leaf_with_room(bench: ModuleType) -> None:
    nodes = bench.fleet()[:24]
    first_fit = bench.FirstFit(nodes)
    single = bench.Job("one", 1, 8, ((8000, 1024, 1),), 0.0, 1.0)
    handle, picks = first_fit.place(single)
    assert picks == [(0, 1)]
    first_fit.assume(single, handle)
    gang = bench.Job("gang", 8, 8, ((8000, 1024, 8),), 0.0, 1.0)
    _, picks = first_fit.place(gang)
    assert picks == [(index, 1) for index in range(8, 16)]  # leaf 0 is broken
    first_fit.release(single, handle)
    _, picks = first_fit.place(gang)
    assert picks == [(index, 1) for index in range(8)]


def test_main_prints_one_json_object(
    bench: ModuleType, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["replay_bench", "--jobs", "50", "--leaves", "2"])
    bench.main()
    out = capsys.readouterr()
    assert json.loads(out.out)["jobs"] <= 50
    assert len(out.err.splitlines()) == 3  # one line per contestant


def test_a_slice_reports_every_figure(result: dict[str, Any]) -> None:
    assert set(result["contestants"]) == {"crdkit", "best-fit", "first-fit"}
    assert result["nodes"] == 64
    assert result["leaves"] == 8
    assert result["jobs"] == 860
    assert sum(result["jobs_by_size"].values()) == result["jobs"]
    assert result["jobs_by_size"]["4"] >= 1
    assert result["jobs_by_size"]["8"] >= 1
    assert set(result["target"]) == {"more_free_leaves_than_best_fit", "in_one_leaf_not_lower"}
    for figures in result["contestants"].values():
        assert set(figures) == CONTESTANT_KEYS
        assert set(figures["wait_by_size"]) == {"1", "2", "4", "8"}


def test_the_figures_hold_together(result: dict[str, Any]) -> None:
    contestants = result["contestants"]
    for name, figures in contestants.items():
        # Every contestant places every job of the very same stream.
        assert figures["jobs_placed"] == result["jobs"], name
        assert figures["multi_pod_jobs"] == contestants["crdkit"]["multi_pod_jobs"] > 0
        assert 0 <= figures["free_leaves_mean"] <= result["leaves"]
        assert 0 <= figures["free_leaves_mean_while_waiting"] <= result["leaves"]
        assert 0 < figures["gpu_util_pct"] <= 100
        assert 0 < figures["gpu_util_while_waiting_pct"] <= 100
        assert figures["queue_max"] > 0  # the slice saturates 8 leaves
        assert 0 < figures["waiting_time_pct"] <= 100
        assert 0 <= figures["wait_p50_s"] <= figures["wait_p99_s"] <= figures["wait_max_s"]
        assert figures["last_start_s"] <= figures["makespan_s"]
        assert figures["makespan_s"] >= result["unconstrained_end_s"]
        assert figures["makespan_s"] >= result["lower_bound_s"] > 0
        assert figures["multi_pod_in_one_leaf"] <= figures["multi_pod_jobs"]
        assert figures["place_calls"] >= result["jobs"]
    required = result["jobs_by_size"]["4"] + result["jobs_by_size"]["8"]
    for name, figures in contestants.items():
        # A gang that requires a leaf lies in one leaf: the placer's contract, and first fit's.
        assert figures["leaf_required_jobs"] == required, name
        assert figures["leaf_required_in_one_leaf"] == required, name
