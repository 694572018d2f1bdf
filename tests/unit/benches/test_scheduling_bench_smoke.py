"""Smoke test of benches/scheduling_bench.py: its in-memory parts (the mirror's per-event cost,
its memory, incremental decisions against rebuild-per-decision) on a 32-node cluster, one
repeat, no control plane; the JSON it prints has every figure the README reports."""

from __future__ import annotations

import json
from types import ModuleType

import pytest
from _benches import load_bench


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("scheduling_bench")


def test_a_tiny_run_prints_every_part(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    code = bench.main(["--nodes", "32,48", "--repeats", "1", "--decisions", "4", "--skip-e2e"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["e2e"] is None
    assert set(result["mirror"]) == {"32", "48"}
    events = result["mirror"]["32"]
    assert events["nodes"] == 32
    assert events["pods"] == 32 * bench.PODS_PER_NODE
    for event in bench.EVENTS:
        assert events[f"{event}_us"] > 0
    assert result["memory"]["nodes"] == 48
    assert result["memory"]["tracemalloc_peak_mb"] > 0
    for kind in bench.WORKLOADS:
        case = result["decisions"]["32"][kind]
        assert case["gangs"] == 4
        assert 0 <= case["placed"] <= 4
        for side in ("incremental", "rebuild"):
            assert case[side]["decisions_per_s"] > 0
            assert case[side]["ms_per_decision_mean"] > 0
        assert case["rebuild_over_incremental"] > 0
    assert len(result["loadavg_start"]) == 3


def test_both_ways_give_the_same_placements(bench: ModuleType) -> None:
    state = bench.cluster_state(64)
    work = bench.workload("mix", 6)
    incremental = bench.run_incremental(state, work)
    rebuild = bench.run_rebuild(state, work)
    assert incremental.statuses == rebuild.statuses
    assert "placed" in incremental.statuses


def test_the_e2e_gangs_are_pytorchjob_pods_of_a_volcano_podgroup(bench: ModuleType) -> None:
    pods = bench.pytorchjob_pods("job-0001", 4)
    assert [p["metadata"]["name"] for p in pods] == [
        "job-0001-master-0",
        "job-0001-worker-0",
        "job-0001-worker-1",
        "job-0001-worker-2",
    ]
    assert {p["metadata"]["annotations"]["scheduling.k8s.io/group-name"] for p in pods} == {
        "job-0001"
    }
    group = bench.podgroup_manifest("job-0001", 4)
    assert group["spec"]["minMember"] == 4
    assert group["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}
    assert all(size in bench.E2E_SIZES for size in bench.e2e_gang_sizes(50))


def test_the_profile_names_the_mirror_handlers(bench: ModuleType) -> None:
    text = bench.profile_mirror(bench.cluster_state(16), top=40)
    assert "set_pod" in text
    assert "set_node" in text
