"""Building the benchmarks' Go peers (benches/kueue_tas, benches/controller_runtime_peer).

Each peer has a ``build.sh`` (on top of tools/go-bench-build.sh) that builds it from the Go
module proxy into ``~/.cache/crdkit/bench-bin``, or finds it up to date, and prints the
binary's path on its last line. A peer that cannot be built is reported by the bench, never
fatal: the crdkit figures are still measured.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

BUILD_TIMEOUT_S = 1800


def build(script: Path, label: str) -> tuple[Path | None, str | None]:
    """Run ``script``; (binary, None), or (None, why not) naming the peer as ``label``."""
    try:
        done = subprocess.run(
            ["bash", str(script)],
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"building the {label} peer failed: {error}"
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines or not Path(lines[-1]).is_file():
        tail = " | ".join(done.stderr.strip().splitlines()[-8:])
        return None, f"building the {label} peer failed (exit {done.returncode}): {tail}"
    return Path(lines[-1]), None


def version_info(binary: Path) -> dict[str, Any]:
    """The peer's ``version`` subcommand (the module versions it was built with), with its path;
    ``error`` instead when it does not answer."""
    info: dict[str, Any] = {"binary": str(binary)}
    try:
        done = subprocess.run(
            [str(binary), "version"], capture_output=True, text=True, timeout=60, check=False
        )
        found = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError) as error:
        return {**info, "error": f"{binary} version failed: {error}"}
    if not isinstance(found, dict):
        return {**info, "error": f"{binary} version exited {done.returncode} without JSON"}
    return {**info, **found}
