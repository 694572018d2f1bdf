"""Smoke test of benches/scheduler_pass_bench.py: a 32-node cluster, 10 gangs waiting, two
passes per row; every row measured passes over the whole queue and the explanations it kept
or made again. Its setup is the one scheduling_bench.py's saturated row shares."""

from __future__ import annotations

import json

import pytest
from _benches import load_bench


def test_a_tiny_run_reports_every_row(capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench("scheduler_pass_bench")
    assert bench.main(["--nodes", "32", "--waiting", "10", "--passes", "2"]) == 0
    result = json.loads(capsys.readouterr().out)
    rows = result["rows"]
    assert [(r["explain_refresh_s"], r["gangs"]) for r in rows] == [
        (10.0, "alike"),
        (10.0, "all different"),
        (0.0, "alike"),
        (0.0, "all different"),
    ]
    for row in rows:
        assert row["nodes"] == 32
        assert row["waiting"] == 10
        assert row["passes_measured"] >= 2
        assert 0 < row["pass_ms_median"] <= row["pass_ms_max"]
    # Kept explanations are shared by alike gangs; made again, each different gang gets its own.
    assert rows[0]["explanations_in_measured_passes"] <= rows[0]["passes_measured"]
    assert rows[3]["explanations_in_measured_passes"] >= 2 * 10


def test_the_waiting_gangs_arrive_in_name_order_and_bigger_ones_have_a_podgroup() -> None:
    bench = load_bench("scheduler_pass_bench")
    gangs = bench.waiting_gangs(5, (1, 2, 4), alike=False)
    assert [g.name for g in gangs] == sorted(g.name for g in gangs)
    assert [g.size for g in gangs] == [1, 2, 4, 1, 2]
    single = gangs[0].objects()
    assert len(single) == 1
    assert single[0].spec.node_name is None
    group, *pods = gangs[2].objects()
    assert group.spec.min_member == 4
    assert [p.metadata.labels[bench.COSCHEDULING_POD_GROUP_LABEL] for p in pods] == [
        gangs[2].name
    ] * 4
    assert {p.spec.containers[0].resources.requests["memory"] for p in pods} == {"3Mi"}


def test_a_throughput_gang_is_a_kubernetes_podgroup_required_in_one_leaf() -> None:
    bench = load_bench("scheduler_pass_bench")
    gang = bench.waiting_gangs(1, (2,), prefix="gang", api="kubernetes", topology=bench.LEAF)[0]
    group, *pods = gang.objects()
    assert group.spec.scheduling_policy.gang.min_count == 2
    assert [c.key for c in group.spec.scheduling_constraints.topology] == [bench.LEAF]
    assert [p.spec.scheduling_group.pod_group_name for p in pods] == ["gang-00000"] * 2
