"""Smoke test of benches/scheduling_bench.py: its in-memory parts (the mirror's per-event cost,
its memory, incremental decisions against rebuild-per-decision) on a 32-node cluster, one
repeat, no control plane; the JSON it prints has every figure the README reports. The
saturated-queue row runs at 64 nodes with 20 gangs waiting, and its profile at 32; the
throughput row at 64 nodes with a burst of 6 gangs."""

from __future__ import annotations

import json
import pstats
from pathlib import Path
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
    assert result["saturated"] is None  # only on request
    assert "saturated_profile" not in result
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


def test_the_saturated_row_binds_the_head_of_the_queue_and_its_profile_is_written(
    bench: ModuleType, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    stats = tmp_path / "saturated.pstats"
    argv = ["--skip-in-memory", "--skip-e2e", "--saturated", "64", "--waiting", "20"]
    argv += ["--saturated-passes", "2", "--bind-events", "4"]
    argv += ["--saturated-profile", str(stats), "--profile-nodes", "32"]
    code = bench.main(argv)
    out, err = capsys.readouterr()
    assert code == 0
    result = json.loads(out)
    assert result["mirror"] is None
    assert result["decisions"] is None
    assert result["e2e"] is None
    assert set(result["saturated"]) == {"64"}
    row = result["saturated"]["64"]
    profiled = result["saturated_profile"]
    assert profiled["nodes"] == 32
    assert profiled["path"] == str(stats)
    for case, nodes in ((row, 64), (profiled, 32)):
        assert case["nodes"] == nodes
        assert case["waiting"] == 20
        assert case["gang_sizes"] == [1, 2, 4]
        assert case["waiting_pods"] == sum([1, 2, 4][i % 3] for i in range(20))
        assert case["passes"] >= 2  # each capacity event woke a pass over the whole queue
        assert 0 < case["pass_ms_median"] <= case["pass_ms_max"]
        assert 0 < case["place_ms_median"] <= case["pass_ms_max"]
        assert case["bind_events"] == 4
        assert case["bound"] == 4  # every measured event bound the gang at the head
        assert case["others_bound"] == 0  # and only it
        assert case["queued_after"] == 20 - 4
        kinds = ["pod_deleted", "node_added", "pod_succeeded", "pod_deleted"]
        assert [b["event"] for b in case["binds"]] == kinds
        by_event = case["bind_ms_by_event"]
        assert {kind: by_event[kind]["events"] for kind in by_event} == {
            "pod_deleted": 2,
            "node_added": 1,
            "pod_succeeded": 1,
        }
        assert all(0 <= by_event[k]["median"] <= by_event[k]["max"] for k in by_event)
        assert [b["gang_pods"] for b in case["binds"]] == [1, 2, 4, 1]
        for bind in case["binds"]:
            assert bind["ms"] >= 0
            assert bind["passes"] >= 1
            # Between the room freeing and the last bind, only the gang's own writes (its
            # binds and its PodGroup's status): a new head of the line rewrites no other
            # gang's unchanged status, nor an Event on each of their pods.
            assert bind["writes"] <= bind["gang_pods"] + 1, bind
            assert bind["writes"] >= bind["gang_pods"]  # its own binds are among them
            parts = [bind["wake_ms"], bind["pass_ms"], bind["after_pass_ms"]]
            assert all(part is not None and part >= 0 for part in parts)
            assert bind["wake_ms"] + bind["after_pass_ms"] <= bind["ms"]
        assert 0 <= case["bind_ms_median"] <= case["bind_ms_max"]
        assert 0 <= case["bound_within_1s"] <= case["bound"]
        assert case["gc_full"]["collections"] >= 0
        assert case["gc_full"]["ms_max"] <= case["gc_full"]["ms_total"]
    assert stats.stat().st_size > 0
    assert pstats.Stats(str(stats)).total_calls > 0
    assert "schedule_pass" in err
    assert "Ordered by: cumulative time" in err


def test_the_throughput_row_binds_every_gang_of_the_burst_in_one_leaf(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--skip-in-memory", "--skip-e2e", "--throughput", "64", "--throughput-gangs", "6"]
    argv += ["--throughput-sizes", "4,2", "--wait", "60"]
    code = bench.main(argv)
    out, _ = capsys.readouterr()
    assert code == 0
    result = json.loads(out)
    assert result["saturated"] is None
    assert set(result["throughput"]) == {"64"}
    row = result["throughput"]["64"]
    assert (row["nodes"], row["gangs"], row["gang_sizes"]) == (64, 6, [4, 2])
    assert row["pods"] == row["bound_pods"] == 18
    assert row["bound_gangs"] == 6
    for figure in ("pods_per_s", "gangs_per_s", "create_s", "burst_s"):
        assert row[figure] > 0
    assert 0 <= row["bind_p50_ms"] <= row["bind_p99_ms"] <= row["bind_max_ms"]
    assert row["passes"] >= 1
    assert row["writes"] >= row["pods"]  # every bind, besides statuses and Events


def test_the_py_spy_split_charges_each_stack_to_its_part(bench: ModuleType) -> None:
    loop = "run (asyncio/runners.py:190);GangScheduler.run (crdkit/scheduling/scheduler.py:329)"
    lines = [
        f"{loop};GangScheduler.schedule_pass (x.py:1);GroupReader.read (pending.py:140) 6",
        f"{loop};GangScheduler.schedule_pass (x.py:1);Cycle._place (cycle.py:160) 2",
        "_worker (concurrent/futures/thread.py:83);Cluster.place_all_records (cluster.py:219) 1",
        "task_step;Dispatcher._report_waiting (dispatcher.py:299);Client.create (c.py:1) 1",
        "_worker (concurrent/futures/thread.py:81);0x7f68 (libc.so.6) 5",  # idle, --native
        "",
    ]
    assert bench.spy_split(lines) == {
        "pass: gangs read (pods, PodGroups)": 60.0,
        "pass: other (queue order, placements)": 20.0,
        "Events and statuses of waiting gangs": 10.0,
        "placer (its worker thread)": 10.0,
    }
