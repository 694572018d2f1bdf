"""Smoke tests of benches/placer_bench.py that need neither Go nor a long run.

They check what the bench hands the Kueue peer (benches/kueue_tas) and how it reports a peer
that cannot be built or run; the Go program itself is exercised only by the bench.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from _benches import load_bench


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("placer_bench")


def test_kueue_input_is_the_placement_io_cluster_and_gangs(bench: ModuleType) -> None:
    snapshot = bench.synthetic(40)
    document = bench.kueue_input(snapshot, [bench.gang(1), bench.gang(16)], 7, 3)
    # What the Go side reads: camelCase keys, the cluster as is, gangs in placement-io form.
    decoded = json.loads(json.dumps(document))
    assert decoded["searchRepeats"] == 7
    assert decoded["snapshotRepeats"] == 3
    assert decoded["cluster"]["levels"] == ["bench.io/zone", "bench.io/block", "bench.io/rack"]
    assert len(decoded["cluster"]["nodes"]) == 40
    first = decoded["cluster"]["nodes"][0]
    assert first["labels"]["bench.io/rack"] == "r0000"
    assert first["allocatable"]["nvidia.com/gpu"] == 8
    assert set(first["used"]) == {"nvidia.com/gpu", "cpu", "memory"}
    gang = decoded["gangs"][1]
    assert gang["topology"] == {"mode": "preferred", "level": "bench.io/rack"}
    (task,) = gang["tasks"]
    assert task["replicas"] == 16
    assert task["requests"] == {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": 1}
    assert task["minAvailable"] is None
    assert task["slice"] is None


def test_percentile_is_the_rounded_index(bench: ModuleType) -> None:
    assert bench.percentile([5.0, 1.0, 3.0], 0.99) == 5.0
    assert bench.percentile([float(v) for v in range(101)], 0.99) == 99.0


def test_a_failed_build_is_an_error_not_a_crash(bench: ModuleType, tmp_path: Path) -> None:
    script = tmp_path / "build.sh"
    script.write_text("echo 'go: no toolchain' >&2\nexit 3\n")
    binary, error = bench.build_kueue(script)
    assert binary is None
    assert "exit 3" in error
    assert "go: no toolchain" in error


def test_a_peer_that_fails_is_reported_per_case(bench: ModuleType, tmp_path: Path) -> None:
    peer = tmp_path / "kueue_tas"
    peer.write_text('#!/bin/sh\necho \'{"error": "bad input"}\'\nexit 1\n')
    peer.chmod(0o755)
    cluster, gangs = bench.kueue_cluster(peer, bench.synthetic(16), (1, 16), 2, 1)
    assert cluster == {"error": "bad input"}
    case = {"rust_p50_us": 10.0}
    fields = bench.kueue_fields(case, gangs[0])
    assert fields["kueue_error"] == "bad input"
    assert fields["kueue_search_p50_us"] is None
    assert set(fields) == set(bench.KUEUE_FIELDS)
    missing = bench.run_kueue(tmp_path / "absent", {"cluster": {}})
    assert "error" in missing


def test_kueue_fields_from_a_result(bench: ModuleType) -> None:
    result = {
        "searchP50Us": 500.0,
        "searchP99Us": 900.0,
        "searchRepeats": 10,
        "withSnapshotP50Us": 5000.0,
        "withSnapshotP99Us": 6000.0,
        "snapshotRepeats": 3,
        "found": True,
        "level": "bench.io/rack",
        "domain": {"bench.io/rack": "r0001"},
        "nodesUsed": 3,
    }
    fields = bench.kueue_fields({"rust_p50_us": 20.0}, result)
    assert fields["speedup_vs_kueue"] == 25.0
    assert fields["kueue_level"] == "bench.io/rack"
    assert fields["kueue_error"] is None
