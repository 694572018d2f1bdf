"""Smoke tests of benches/runtime_bench.py that need neither Go nor a control plane.

They check the command line each operator is started with (and that every flag handed to the
controller-runtime peer exists in its Go source), the report built from fake measurements, and
how a peer that could not be built is reported; the operators themselves run only in the bench.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest
from _benches import BENCHES, load_bench

PEER_DIR = BENCHES / "controller_runtime_peer"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("runtime_bench")


def go_flags(*files: str) -> set[str]:
    """The flags the Go peer defines (``fs.String("name", ...)``) plus controller-runtime's own
    ``--kubeconfig``."""
    source = "".join((PEER_DIR / name).read_text() for name in files)
    return set(re.findall(r'fs\.(?:String|Int|Bool|Duration)\("([a-z-]+)"', source)) | {
        "kubeconfig"
    }


def flag_value(command: list[str], flag: str) -> str:
    return command[command.index(flag) + 1]


def test_crdkit_runs_its_workers_limited_to_the_namespace(bench: ModuleType) -> None:
    command, env = bench.operator_command(
        bench.OPERATORS["crdkit"], "bench-ns", 4321, Path("/tmp/kubeconfig")
    )
    assert Path(command[0]).name == "crdkit"
    assert command[1:3] == ["run", f"{bench.OPERATORS_MODULE}:BenchReconciler"]
    assert flag_value(command, "--namespace") == "bench-ns"
    assert flag_value(command, "--max-concurrent-reconciles") == "32"
    assert flag_value(command, "--metrics-bind-address") == "0"
    assert flag_value(command, "--health-probe-bind-address") == "127.0.0.1:4321"
    assert flag_value(command, "--kubeconfig") == "/tmp/kubeconfig"
    assert env["KUBECONFIG"] == "/tmp/kubeconfig"
    assert "CRDKIT_BENCH_KOPF" not in env


@pytest.mark.parametrize(
    ("name", "workers"), [("controller_runtime", "32"), ("controller_runtime_w1", "1")]
)
def test_controller_runtime_gets_the_same_work_and_its_workers(
    bench: ModuleType, name: str, workers: str
) -> None:
    peer = Path("/cache/bench-bin/controller_runtime_peer")
    command, _ = bench.operator_command(
        bench.OPERATORS[name], "bench-ns", 4321, Path("/tmp/kubeconfig"), peer
    )
    assert command[:2] == [str(peer), "operator"]
    assert flag_value(command, "--max-concurrent-reconciles") == workers
    assert flag_value(command, "--namespace") == "bench-ns"
    assert flag_value(command, "--health-probe-bind-address") == "127.0.0.1:4321"
    assert flag_value(command, "--kubeconfig") == "/tmp/kubeconfig"
    # The CRD's, which the bench imports from runtime_bench_operators.
    assert flag_value(command, "--group") == bench.GROUP
    assert flag_value(command, "--api-version") == bench.VERSION
    assert flag_value(command, "--kind") == bench.KIND
    given = {arg[2:] for arg in command if arg.startswith("--")}
    assert given <= go_flags("operator.go")
    assert bench.OPERATORS[name].ready_path == "/readyz"


def test_controller_runtime_without_its_binary_is_refused(bench: ModuleType) -> None:
    with pytest.raises(ValueError, match="peer binary"):
        bench.operator_command(
            bench.OPERATORS["controller_runtime"], "ns", 1, Path("/tmp/kubeconfig")
        )


def test_kopf_runs_the_same_module_in_kopf_mode(bench: ModuleType) -> None:
    command, env = bench.operator_command(
        bench.OPERATORS["kopf"], "bench-ns", 4321, Path("/tmp/kubeconfig")
    )
    assert command[1:4] == ["run", "--standalone", "--quiet"]
    assert command[-1] == str(bench.OPERATORS_MODULE)
    assert "--liveness=http://127.0.0.1:4321/healthz" in command
    assert env["CRDKIT_BENCH_KOPF"] == "1"
    assert env["KUBECONFIG"] == "/tmp/kubeconfig"


def fake_run(scale: float, startup_cpu: float = 0.5) -> dict[str, float]:
    """One repeat of one operator as ``run_one`` measures it (live and backlog merged)."""
    return {
        "ready_s": 1.0 * scale,
        "startup_cpu_s": startup_cpu,
        "create_s": 5.0,
        "live_s": 6.0 * scale,
        "live_rss_mb": 100.0 * scale,
        "live_cpu_s": startup_cpu + 2.0 * scale,
        "backlog_s": 4.0 * scale,
        "backlog_rss_mb": 120.0 * scale,
        "backlog_cpu_s": 2.5 * scale,
    }


def test_report_gives_medians_ratios_and_the_old_keys(bench: ModuleType) -> None:
    names = list(bench.OPERATORS)
    runs = {
        "crdkit": [fake_run(1.0), fake_run(3.0), fake_run(1.2)],
        "controller_runtime": [fake_run(0.5), fake_run(0.5), fake_run(0.5)],
        "controller_runtime_w1": [fake_run(0.8), fake_run(0.8), fake_run(0.8)],
        "kopf": [fake_run(2.0), fake_run(2.0), fake_run(2.0)],
    }
    peer = {"binary": "/x", "controller_runtime": "v0.25.2"}
    report = bench.summarize(1000, names, runs, [2.0, 2.0, 2.0], {}, peer)

    crdkit = report["operators"]["crdkit"]
    assert crdkit["framework"] == "crdkit"
    assert crdkit["workers"] == 32
    assert crdkit["repeats"] == 3
    assert crdkit["live_s"] == 7.2  # the median of 6.0, 18.0 and 7.2
    assert crdkit["ready_s"] == 1.2
    assert crdkit["cpu_per_object_ms"] == 2.4  # (live CPU - CPU at ready) / 1000 objects
    assert crdkit["peak_rss_mb"] == 144.0  # the backlog run's peak was the larger
    assert crdkit["backlog_over_floor"] == 2.4  # 4.8 s over a 2 s floor
    assert report["operators"]["controller_runtime_w1"]["workers"] == 1
    assert report["operators"]["kopf"]["workers"] is None

    versus_cr = report["ratios"]["crdkit_vs_controller_runtime"]
    assert versus_cr == {
        "cpu_per_object": 2.4,
        "peak_rss": 2.4,
        "spawn_to_ready": 2.4,
        "backlog_over_floor": 2.4,
    }
    assert report["ratios"]["crdkit_vs_kopf"]["peak_rss"] == 0.6

    # The keys of the crdkit-vs-kopf version, now medians.
    assert report["crdkit_s"] == 7.2
    assert report["kopf_s"] == 12.0
    assert report["throughput_ratio"] == round(12.0 / 7.2, 2)
    assert report["memory_ratio"] == round(200.0 / 120.0, 2)
    assert report["backlog_ratio"] == round(8.0 / 4.8, 2)
    assert report["crdkit_rss_mb"] == 120.0
    assert report["crdkit_operator_cpu_s"] == 2.9
    assert report["controller_runtime_backlog_s"] == 2.0
    assert report["backlog_floor_s"] == 2.0
    assert report["crdkit_workers"] == 32
    assert report["repeat"] == 3
    assert report["controller_runtime_peer"] == peer
    assert len(report["runs"]["kopf"]) == 3
    assert report["floor_runs_s"] == [2.0, 2.0, 2.0]


def test_an_unbuildable_peer_is_reported_and_the_rest_still_counts(bench: ModuleType) -> None:
    names = list(bench.OPERATORS)
    why = "building the controller-runtime peer failed (exit 1): go: no toolchain"
    errors = {"controller_runtime": why, "controller_runtime_w1": why}
    runs = {"crdkit": [fake_run(1.0)], "kopf": [fake_run(2.0)]}
    report = bench.summarize(100, names, runs, [2.0], errors, {"error": why})

    cr = report["operators"]["controller_runtime"]
    assert cr == {"framework": "controller-runtime", "workers": 32, "error": why}
    assert report["controller_runtime_peer"] == {"error": why}
    assert set(report["ratios"]["crdkit_vs_controller_runtime"].values()) == {None}
    assert report["ratios"]["crdkit_vs_kopf"]["spawn_to_ready"] == 0.5
    assert "controller_runtime_s" not in report
    assert report["crdkit_s"] == 6.0
    assert report["throughput_ratio"] == 2.0


def test_a_peer_that_failed_midway_keeps_its_finished_repeats(bench: ModuleType) -> None:
    errors = {"kopf": "repeat 2: operator not ready within 120 s (log: empty)"}
    runs = {"crdkit": [fake_run(1.0), fake_run(1.0)], "kopf": [fake_run(2.0)]}
    report = bench.summarize(100, ["crdkit", "kopf"], runs, [2.0, 4.0], errors, None)
    kopf = report["operators"]["kopf"]
    assert kopf["repeats"] == 1
    assert kopf["error"] == errors["kopf"]
    assert kopf["backlog_over_floor"] == 4.0  # its one repeat is measured against floor 1
    assert "controller_runtime_peer" not in report
    assert "crdkit_vs_controller_runtime" not in report["ratios"]


def test_crdkit_uvloop_is_the_same_operator_on_uvloop(bench: ModuleType) -> None:
    plain, _ = bench.operator_command(
        bench.OPERATORS["crdkit"], "bench-ns", 4321, Path("/tmp/kubeconfig")
    )
    command, _ = bench.operator_command(
        bench.OPERATORS["crdkit_uvloop"], "bench-ns", 4321, Path("/tmp/kubeconfig")
    )
    assert plain[-2:] == ["--event-loop", "asyncio"]  # named: auto would pick uvloop
    assert command == [*plain[:-2], "--event-loop", "uvloop"]
