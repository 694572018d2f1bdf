"""Smoke test of benches/scheduler_compare.py on a real local control plane: a 16-node cluster,
one seed, jobs a twentieth of their length, crdkit's contestant, and crdkit-kube (Kubernetes'
own PodGroup on a gated control plane) with ``--hints``; the JSON has every figure the closing
notes record, and the figures hold together. (The kube-scheduler and kube-gang contestants need
the Go build, `tools/kube-scheduler/build.sh`, which the bench runs itself.)"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "benches" / "scheduler_compare.py"


@pytest.mark.parametrize(
    ("contestant", "flags"),
    [("crdkit", ["--ui-page"]), ("crdkit-kube", ["--hints"])],
    ids=["crdkit", "kube"],
)
def test_a_tiny_live_run_reports_every_figure(
    contestant: str, flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    spec = importlib.util.spec_from_file_location("scheduler_compare", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    # Seed 3 draws jobs of 1, 2, 2, 1, 1 and 16 pods: one must take the whole leaf.
    argv = ["--nodes", "16", "--seeds", "3", "--load", "0.8", "--contestants", contestant]
    assert module.main([*argv, "--time-scale", "0.05", "--stall", "60", *flags]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert run["contestant"] == contestant
    assert run["hints"] is ("--hints" in flags)
    assert not run["deadlock"]
    assert run["jobs_done"] == run["jobs"]
    assert run["makespan_s"] >= run["lower_bound_s"] > 0
    assert run["lower_bound_ratio"] == round(run["makespan_s"] / run["lower_bound_s"], 3)
    assert 0 < run["gpu_in_bound_jobs_pct"] <= run["gpu_held_pct"] <= 100
    assert run["leaf_jobs_in_one_leaf_pct"] == 100.0
    assert set(run["wait_by_size"]) == {"1", "2", "4", "8", "16"}
    assert run["log_warnings"] >= len(run["log_first_warnings"])
    assert run["timeline"][0][0] == 0.0
    assert run["timeline"][-1][3] == 0  # every job bound by the end
    assert 0 <= run["half_idle_while_waiting_max_s"] <= run["makespan_s"]
    assert run["cpu_s"] > 0
    # Read from the queue the scheduler publishes every 2 s: a run this short may end before
    # a start is published, so only that the figures hold together is checked here.
    promises = run["promises"]
    assert set(promises) == {"promised_starts", "kept_pct", "late_mean_s", "late_p95_s"}
    if promises["promised_starts"]:
        assert 0 <= promises["kept_pct"] <= 100
        assert promises["late_p95_s"] is not None
    else:
        assert promises["kept_pct"] is None
    if "--ui-page" in flags:  # one page open: its first event is the whole view
        page = run["page"]
        assert page["page_events"] >= 1
        assert page["page_first_bytes"] > 0
        assert page["page_errors"] == 0
