"""Smoke tests of benches/informer_bench.py's controller-runtime peer that need neither Go nor a
control plane: the command line it is given (every flag must exist in its Go source), how its
JSON answer is read, and the keys reported from fake runs or from a peer that did not run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType

import pytest
from _benches import BENCHES, load_bench


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("informer_bench")


def test_the_peer_syncs_the_same_objects(bench: ModuleType) -> None:
    peer = Path("/cache/bench-bin/controller_runtime_peer")
    command = bench.worker_command("controller_runtime", Path("/tmp/kc"), "bench", 500, peer)
    assert command[:2] == [str(peer), "informer"]
    values = dict(zip(command[2::2], command[3::2], strict=True))
    assert values == {
        "--kubeconfig": "/tmp/kc",
        "--namespace": "bench",
        "--objects": "500",
        "--touched": bench.TOUCHED,
        "--group": bench.GROUP,
        "--api-version": "v1",
        "--kind": bench.KIND,
    }
    source = (BENCHES / "controller_runtime_peer" / "informer.go").read_text()
    defined = set(re.findall(r'fs\.(?:String|Int)\("([a-z-]+)"', source)) | {"kubeconfig"}
    assert {flag[2:] for flag in values} <= defined
    with pytest.raises(ValueError, match="peer binary"):
        bench.worker_command("controller_runtime", Path("/tmp/kc"), "bench", 500)


def test_the_python_workers_keep_their_command(bench: ModuleType) -> None:
    command = bench.worker_command("crdkit", Path("/tmp/kc"), "bench", 500)
    assert command[2:4] == ["--worker", "crdkit"]


def test_the_peer_answer_is_read_and_its_failure_raised(bench: ModuleType, tmp_path: Path) -> None:
    peer = tmp_path / "peer"
    answer = {"sync_s": 0.5, "rss_mb": 40.0, "peak_rss_mb": 45.0, "rss_before_mb": 30.0}
    peer.write_text(f"#!/bin/sh\necho '{json.dumps(answer)}'\n")
    peer.chmod(0o755)
    assert bench.measure("controller_runtime", tmp_path / "kc", "bench", 5, peer) == answer
    peer.write_text("#!/bin/sh\necho 'stored 4 objects, expected 5' >&2\nexit 1\n")
    with pytest.raises(RuntimeError, match="expected 5"):
        bench.measure("controller_runtime", tmp_path / "kc", "bench", 5, peer)


def test_peer_fields_from_fake_runs(bench: ModuleType) -> None:
    crdkit = {"sync_s": 0.6, "rss_mb": 108.0, "peak_rss_mb": 110.0, "rss_before_mb": 86.0}
    runs = [
        {
            "sync_s": 0.4,
            "rss_mb": 90.0,
            "peak_rss_mb": 95.0,
            "rss_before_mb": 30.0,
            "heap_inuse_mb": 50.0,
        },
        {
            "sync_s": 0.3,
            "rss_mb": 92.0,
            "peak_rss_mb": 99.0,
            "rss_before_mb": 31.0,
            "heap_inuse_mb": 51.0,
        },
    ]
    fields = bench.peer_fields(crdkit, runs, {"binary": "/x"})
    assert fields["controller_runtime_sync_s"] == 0.3  # each figure's best run
    assert fields["controller_runtime_rss_mb"] == 90.0
    assert fields["controller_runtime_cache_mb"] == 60.0
    assert fields["crdkit_vs_controller_runtime"] == {
        "sync": 2.0,
        "rss": 1.2,
        "peak_rss": round(110 / 95, 2),
        "cache": round(22 / 60, 2),
    }
    assert fields["controller_runtime_peer"] == {"binary": "/x"}


def test_a_peer_that_did_not_run_only_says_why(bench: ModuleType) -> None:
    crdkit = {"sync_s": 0.6, "rss_mb": 108.0, "peak_rss_mb": 110.0, "rss_before_mb": 86.0}
    why = {"error": "building the controller-runtime peer failed (exit 1): no Go"}
    assert bench.peer_fields(crdkit, None, why) == {"controller_runtime_peer": why}
    assert bench.peer_fields(crdkit, [], why) == {"controller_runtime_peer": why}
