"""Child processes: whole process groups go away, stubborn ones by SIGKILL."""

from __future__ import annotations

import os
import time
from pathlib import Path

from crdkit.testing.envtest.processes import ManagedProcess, free_ports


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie still answers kill(0); it no longer runs.
    return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


def _wait_for_file(path: Path) -> str:
    deadline = time.monotonic() + 10
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)
    return path.read_text().strip()


def test_free_ports_are_distinct() -> None:
    ports = free_ports(5)
    assert len(set(ports)) == 5
    assert all(0 < p < 65536 for p in ports)


def test_stop_kills_what_the_program_forked(tmp_path: Path) -> None:
    grandchild = tmp_path / "grandchild.pid"
    script = f"sleep 300 & echo $! > {grandchild}; wait"
    process = ManagedProcess("shell", ["sh", "-c", script], tmp_path / "shell.log")
    assert os.getpgid(process.pid) == process.pid
    orphan = int(_wait_for_file(grandchild))
    process.stop(grace=5)
    assert process.poll() is not None
    deadline = time.monotonic() + 5
    while not _gone(orphan):
        assert time.monotonic() < deadline, "the forked sleep survived"
        time.sleep(0.02)


def test_sigterm_ignored_means_sigkill_after_grace(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    script = f"trap '' TERM; echo ok > {ready}; while :; do sleep 0.1; done"
    process = ManagedProcess("stubborn", ["sh", "-c", script], tmp_path / "stubborn.log")
    _wait_for_file(ready)
    # -9 says the grace ran out and SIGKILL followed; without it stop() would wait forever
    # (the test's timeout). No wall-clock bound: a loaded machine can miss one.
    process.stop(grace=0.5)
    assert process.poll() == -9


def test_output_goes_to_the_log(tmp_path: Path) -> None:
    process = ManagedProcess("echo", ["sh", "-c", "echo hello; echo oops >&2"], tmp_path / "e.log")
    deadline = time.monotonic() + 10
    while process.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    process.stop(grace=5)
    assert process.log_tail().splitlines() == ["hello", "oops"]
