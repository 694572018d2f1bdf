"""The supervisor: what a parent announced dies with it, SIGKILL included, and its folder too.

Each test's parent is a Python program of its own, so the test can SIGKILL it. The programs it
watches are ``sleep``s in process groups of their own, as etcd and kube-apiserver are.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from crdkit.testing.envtest.processes import ManagedProcess
from crdkit.testing.envtest.supervisor import Supervisor

DEADLINE = 30.0

# argv: workdir, mode. Starts a supervisor for workdir and, as the mode says, programs in
# process groups of their own; prints their pids as JSON, then waits to be killed.
PARENT = textwrap.dedent(
    """
    import ctypes, json, os, subprocess, sys, time
    from pathlib import Path
    from crdkit.testing.envtest.processes import ManagedProcess
    from crdkit.testing.envtest.supervisor import Supervisor

    workdir, mode = Path(sys.argv[1]), sys.argv[2]
    (workdir / "data").mkdir()
    supervisor = Supervisor(workdir)
    info = {"supervisor": supervisor.pid}
    if mode in ("watched", "forked", "fork-exits"):
        # A shell that forks a sleep into its group: the whole group must go.
        script = f"sleep 300 & echo $! > {workdir}/grandchild; wait"
        shell = ManagedProcess("shell", ["sh", "-c", script], workdir / "shell.log",
                               supervisor=supervisor)
        while not (workdir / "grandchild").exists() or not (workdir / "grandchild").read_text():
            time.sleep(0.01)
        info["programs"] = [shell.pid, int((workdir / "grandchild").read_text())]
    if mode == "forgotten":
        sleep = subprocess.Popen(["sleep", "300"], start_new_session=True)
        supervisor.watch(sleep.pid)
        supervisor.forget(sleep.pid)
        info["programs"] = [sleep.pid]
    if mode == "unannounced":
        # Started but never announced, as when the parent dies between fork and announcing:
        # it names the folder in its arguments, as etcd and kube-apiserver do.
        hold = [sys.executable, "-c", "import time; time.sleep(300)", str(workdir)]
        sleep = subprocess.Popen(hold, start_new_session=True)
        info["programs"] = [sleep.pid]
    if mode == "bystander":
        # Names the folder too, but in the parent's session, as a `tail -f` of a log would.
        hold = [sys.executable, "-c", "import time; time.sleep(300)", str(workdir)]
        info["programs"] = [subprocess.Popen(hold).pid]
    if mode == "forked" and ctypes.CDLL(None).fork() == 0:
        # A fork Python does not see (as from C) keeps the pipe's write end open, so the
        # supervisor never reads end-of-file.
        time.sleep(300)
        os._exit(0)
    if mode == "fork-exits":
        child = os.fork()
        if child == 0:
            sys.exit(0)  # a normal exit: the fork's atexit handlers run
        os.waitpid(child, 0)
        info["alive_after_fork_exit"] = all(
            subprocess.run(["kill", "-0", str(pid)]).returncode == 0 for pid in info["programs"]
        )
        # Announced after the fork's exit: killed with the parent only if the supervisor did
        # not take the fork's exit for the parent's.
        sentinel = subprocess.Popen(["sleep", "300"], start_new_session=True)
        supervisor.watch(sentinel.pid)
        info["programs"].append(sentinel.pid)
    print(json.dumps(info), flush=True)
    time.sleep(300)
    """
)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _catches(pid: int, signum: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & (1 << (signum - 1)))
    return False


def _wait_until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _start_parent(workdir: Path, mode: str) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(workdir), mode], stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    line = parent.stdout.readline()
    assert line, "the parent died before reporting"
    info: dict[str, Any] = json.loads(line)
    return parent, info


def _kill_all(parent: subprocess.Popen[str], pids: list[int]) -> None:
    # After a failure: leave nothing behind for the next test.
    if parent.poll() is None:
        parent.kill()
        parent.wait()
    for pid in pids:
        if _running(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert parent.stdout is not None
    parent.stdout.close()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "crdkit-envtest-x"
    path.mkdir()
    return path


def _kill_parent_then_see_all_gone(
    parent: subprocess.Popen[str], info: dict[str, Any], workdir: Path
) -> None:
    """SIGKILL ``parent``, then wait until every program it announced and the folder are gone:
    the supervisor's whole promise."""
    parent.kill()
    parent.wait()
    _wait_until(lambda: not any(map(_running, info["programs"])), "a program survived")
    _wait_until(lambda: not workdir.exists(), "the folder survived")


def test_sigkill_of_the_parent_kills_watched_groups_and_removes_the_folder(
    workdir: Path,
) -> None:
    parent, info = _start_parent(workdir, "watched")
    try:
        assert all(_running(pid) for pid in info["programs"])
        _kill_parent_then_see_all_gone(parent, info, workdir)
        _wait_until(lambda: not _running(info["supervisor"]), "the supervisor stayed")
    finally:
        _kill_all(parent, [*info["programs"], info["supervisor"]])


def test_a_fork_holding_the_pipe_does_not_keep_the_programs_alive(workdir: Path) -> None:
    parent, info = _start_parent(workdir, "forked")
    try:
        _kill_parent_then_see_all_gone(parent, info, workdir)
    finally:
        _kill_all(parent, [*info["programs"], info["supervisor"], *_copies_of_parent()])


def test_the_exit_of_a_fork_is_not_the_parents(workdir: Path) -> None:
    parent, info = _start_parent(workdir, "fork-exits")
    try:
        assert info["alive_after_fork_exit"]
        _kill_parent_then_see_all_gone(parent, info, workdir)
    finally:
        _kill_all(parent, [*info["programs"], info["supervisor"]])


def _copies_of_parent() -> list[int]:
    # The fork runs the same -c program as the parent; found by it, to be cleaned up.
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if PARENT.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_a_program_not_yet_announced_dies_too_when_it_names_the_folder(workdir: Path) -> None:
    parent, info = _start_parent(workdir, "unannounced")
    try:
        _kill_parent_then_see_all_gone(parent, info, workdir)
    finally:
        _kill_all(parent, [*info["programs"], info["supervisor"]])


@pytest.mark.parametrize("mode", ["forgotten", "bystander"])
def test_what_the_supervisor_does_not_own_is_left_alone(workdir: Path, mode: str) -> None:
    parent, info = _start_parent(workdir, mode)
    try:
        parent.kill()
        parent.wait()
        # The supervisor's exit is the end of its cleanup; the program must outlive it.
        _wait_until(lambda: not _running(info["supervisor"]), "the supervisor stayed")
        assert not workdir.exists()
        assert _running(info["programs"][0])
    finally:
        _kill_all(parent, [*info["programs"], info["supervisor"]])


def test_close_ends_the_supervisor_and_kills_what_is_still_watched(workdir: Path) -> None:
    supervisor = Supervisor(workdir)
    process = ManagedProcess("sleep", ["sleep", "300"], workdir / "s.log", supervisor=supervisor)
    try:
        # The parent's own session is not the supervisor's: a Ctrl-C aimed at it misses.
        assert os.getsid(supervisor.pid) == supervisor.pid != os.getsid(0)
        supervisor.close()
        assert not _running(supervisor.pid)  # close reaped it
        _wait_until(lambda: process.poll() is not None, "a watched program survived close")
        assert process.poll() == -signal.SIGKILL
        assert not workdir.exists()
        supervisor.close()  # a second close is harmless
        supervisor.watch(process.pid)  # and so is a message after close
    finally:
        process.stop(grace=1)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_sigterm_to_the_supervisor_cleans_up(workdir: Path) -> None:
    supervisor = Supervisor(workdir)
    process = ManagedProcess("sleep", ["sleep", "300"], workdir / "s.log", supervisor=supervisor)
    try:
        # Until its handler is in place (it is still starting) SIGTERM would just kill it.
        _wait_until(lambda: _catches(supervisor.pid, signal.SIGTERM), "no SIGTERM handler")
        os.kill(supervisor.pid, signal.SIGTERM)
        _wait_until(lambda: process.poll() is not None, "the watched program survived")
        _wait_until(lambda: not workdir.exists(), "the folder survived")
        supervisor.close()
        assert not _running(supervisor.pid)
    finally:
        process.stop(grace=1)
