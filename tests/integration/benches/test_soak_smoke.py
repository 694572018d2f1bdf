"""The soak's 3-minute form (``benches/soak.py --smoke``) on a real local control plane: the
hello operator and ``crdkit scheduler`` under churn, with each kind of fault once (the
operator SIGKILLed and restarted, watches cut, a 503 storm, the apiserver restarted). Nothing
may leak (fds and tasks back within a small margin of their level after warm-up, RSS growth
under a generous bound) and nothing may be lost (no Hello left unreconciled, no gang left
partly bound). Bounds on growth and state only, never on time. About three and a half minutes.

The bench's own arithmetic (the pooled RSS fit, the fault schedule, the log kinds) is checked
first, without a control plane."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[3] / "benches" / "soak.py"
RSS_GROWTH_MB = 40.0
"""How much a process's RSS may grow from its first sample after warm-up to its last: a
generous bound, for allocator arenas that settle late on a busy machine; a leak under this
churn grows without end."""


@pytest.fixture(scope="module")
def soak() -> ModuleType:
    spec = importlib.util.spec_from_file_location("soak_bench", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_rss_fit_gives_each_incarnation_its_own_intercept(soak: ModuleType) -> None:
    """Two incarnations, each growing 1 MB a minute from a different start: the pooled slope
    is that growth, where one line through all of them would see the restart's drop."""
    samples = [
        soak.Sample(at, life, base + at / 60, 10, 5.0, 0.0, 0.0, None)
        for life, base, times in ((0, 100.0, range(0, 300, 10)), (1, 40.0, range(300, 600, 10)))
        for at in times
    ]
    assert soak.pooled_slope(samples) * 600 == pytest.approx(10.0)
    assert soak.pooled_slope(samples[:2]) is None  # too few to fit


def test_faults_come_closer_so_that_each_kind_happens(soak: ModuleType) -> None:
    kinds = len(set(soak.FAULT_CYCLE))
    times = soak.fault_times(40.0, 129.0, 60.0)
    assert len(times) == kinds
    assert times[0] == 40.0
    assert times[-1] == pytest.approx(129.0)
    assert soak.fault_times(300.0, 1100.0, 60.0)[1] == 360.0  # room enough: every minute


def test_log_lines_fold_into_kinds(soak: ModuleType) -> None:
    line = json.dumps({"level": "warning", "logger": "x", "msg": "pod g000012-3 failed: 503"})
    assert soak._kind("scheduler", line) == "scheduler: warning: x: pod gN-N failed: N"
    assert soak._kind("operator", json.dumps({"level": "info", "msg": "fine"})) is None
    assert soak._kind("operator", "Traceback (most recent call last):").startswith(
        "operator: raw: "
    )


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(600)  # a guard against a hang; the run takes about 3.5 minutes
def test_three_minutes_of_churn_and_faults_leak_nothing_and_lose_nothing(
    soak: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert soak.main(["--smoke", "--log-dir", str(tmp_path)]) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert result["faults"] == {kind: 1 for kind in set(soak.FAULT_CYCLE)}
    churn = result["churn"]
    assert churn["hello_update"] > 0
    assert churn["gangs_finished"] > 0
    assert result["unreconciled"] == [], result["errors_by_kind"]
    assert result["partial_gangs"] == [], result["errors_by_kind"]
    assert result["processes"]["operator"]["incarnations"] == 2
    for name, figures in result["processes"].items():
        assert figures["samples_after_warmup"] >= 5, name
        fds, tasks, rss = figures["fds"], figures["tasks"], figures["rss_mb"]
        assert fds["last"] <= fds["first"] + soak.FD_MARGIN, (name, fds)
        assert tasks["last"] <= tasks["first"] + soak.task_margin(tasks["first"]), (name, tasks)
        assert rss["last"] - rss["first"] < RSS_GROWTH_MB, (name, rss)
    met = result["targets"]["met"]
    assert met["zero_unreconciled"]
    assert met["zero_partial_gangs"]
