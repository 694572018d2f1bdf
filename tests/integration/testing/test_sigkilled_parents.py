"""SIGKILL of whatever started a control plane leaves nothing behind.

Each parent runs with ``TMPDIR`` pointing at a folder of the test's own, so "of that run" is
exact: the control plane's temporary folder is made there, and etcd and kube-apiserver name it
in their arguments (``--data-dir``, ``--cert-dir``). Before the kill the test sees both programs
and the folder (so it can fail); after it, it waits for both to be gone.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from crdkit.testing import find_binaries

pytestmark = pytest.mark.integration

CRDKIT = str(Path(sys.executable).parent / "crdkit")
START_DEADLINE = 120.0
CLEANUP_DEADLINE = 60.0

# A Python program that starts a control plane, says where it is, and waits to be killed.
# It restarts kube-apiserver first: the new one must be covered as the first one was.
SCRIPT = textwrap.dedent(
    """
    import asyncio
    from crdkit.testing import ControlPlane

    async def main():
        plane = ControlPlane()
        await plane.start()
        await plane.restart_apiserver()
        print("ready", plane.workdir, flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)

# The command under `crdkit envtest run`: reports its pid and waits; the test kills it at the end.
COMMAND = textwrap.dedent(
    """
    import os, time
    print("ready", os.getpid(), os.environ["KUBECONFIG"], flush=True)
    time.sleep(3600)
    """
)

INNER_TESTS = textwrap.dedent(
    """
    import time

    def test_hold(control_plane):
        print("ready", control_plane.workdir, flush=True)
        time.sleep(3600)
    """
)

INNER_INI = textwrap.dedent(
    """
    [pytest]
    asyncio_mode = auto
    asyncio_default_fixture_loop_scope = function
    """
)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # gone while we looked
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def _programs_of_run(tmpdir: Path) -> dict[int, str]:
    """Live processes whose arguments name ``tmpdir``: the run's etcd, kube-apiserver and
    anything else started for that control plane."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(str(tmpdir).encode() in arg for arg in argv) and not _is_zombie(int(entry.name)):
            found[int(entry.name)] = Path(argv[0].decode()).name
    return found


def _workdirs_of_run(tmpdir: Path) -> list[Path]:
    return sorted(tmpdir.glob("crdkit-envtest-*"))


def _wait_for_line(process: subprocess.Popen[str], first_word: str) -> list[str]:
    """The words after ``first_word`` on the first line it begins, within the deadline."""
    assert process.stdout is not None
    deadline = time.monotonic() + START_DEADLINE
    buffered = ""
    output = []
    fd = process.stdout.fileno()
    while time.monotonic() < deadline:
        readable, _, _ = select.select([fd], [], [], 0.5)
        if not readable:
            assert process.poll() is None, f"parent exited early: {''.join(output)}"
            continue
        chunk = os.read(fd, 65536).decode(errors="replace")
        assert chunk, f"parent closed its output: {''.join(output)}"
        output.append(chunk)
        buffered += chunk
        *complete, _partial = buffered.split("\n")  # a line counts once it has ended
        for line in complete:
            words = line.split()
            if words[:1] == [first_word]:
                return words[1:]
    raise AssertionError(f"no line began with {first_word}: {''.join(output)}")


def _wait_for_nothing_left(tmpdir: Path) -> tuple[dict[int, str], list[Path]]:
    deadline = time.monotonic() + CLEANUP_DEADLINE
    while True:
        programs, workdirs = _programs_of_run(tmpdir), _workdirs_of_run(tmpdir)
        if (not programs and not workdirs) or time.monotonic() > deadline:
            return programs, workdirs
        time.sleep(0.1)


def _parent_argv(kind: str, tmp_path: Path) -> list[str]:
    if kind == "script":
        return [sys.executable, "-c", SCRIPT]
    if kind == "envtest-run":
        return [CRDKIT, "envtest", "run", "--", sys.executable, "-c", COMMAND]
    if kind == "envtest-up":
        return [CRDKIT, "envtest", "up"]
    (tmp_path / "session").mkdir()
    (tmp_path / "session" / "test_hold.py").write_text(INNER_TESTS)
    (tmp_path / "session" / "pytest.ini").write_text(INNER_INI)
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-s", "-q", "session"]


@pytest.mark.parametrize("kind", ["script", "envtest-run", "envtest-up", "pytest-session"])
def test_sigkill_of_the_parent_leaves_no_process_and_no_folder(tmp_path: Path, kind: str) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    assets = find_binaries().kube_apiserver.parent
    env = {**os.environ, "TMPDIR": str(tmpdir), "KUBEBUILDER_ASSETS": str(assets)}
    command_pid = None
    parent = subprocess.Popen(
        _parent_argv(kind, tmp_path),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        # `up` says "Ctrl-C stops it." once it serves; the others print a "ready" line.
        words = _wait_for_line(parent, "Ctrl-C" if kind == "envtest-up" else "ready")
        if kind == "envtest-run":
            command_pid = int(words[0])
        before = _programs_of_run(tmpdir)
        assert {"etcd", "kube-apiserver"} <= set(before.values()), before
        assert len(_workdirs_of_run(tmpdir)) == 1

        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)

        programs, workdirs = _wait_for_nothing_left(tmpdir)
        assert programs == {}, f"left running after SIGKILL of the {kind}: {programs}"
        assert workdirs == [], f"left on disk after SIGKILL of the {kind}: {workdirs}"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        assert parent.stdout is not None
        parent.stdout.close()
        # Whatever a failed run left, so later tests do not share the machine with it.
        for pid in [*_programs_of_run(tmpdir), *([command_pid] if command_pid else [])]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(tmpdir, ignore_errors=True)
