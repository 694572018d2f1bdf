"""Smoke test of benches/leader_failover.py that needs no control plane: it loads (its helpers
come from runtime_bench) and refuses a meaningless round count before starting anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "benches" / "leader_failover.py"


def test_zero_rounds_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--rounds", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--rounds must be at least 1" in done.stderr
