"""A small process that cleans up after a control plane whose Python parent died.

A SIGKILLed parent runs no ``finally``, no ``atexit``: etcd and kube-apiserver, each in a
session of its own, would live on, with the temporary folder holding the admin key. So every
``ControlPlane`` starts a supervisor first and tells it, over a pipe, which process groups to
watch. The parent holds the only write end. When it reads end-of-file (the parent died, however,
or exec'd) the supervisor SIGKILLs the groups it watches, deletes the folder and exits; the
folder's removal is the supervisor's, because after a SIGKILL nothing else is left to do it.

Why a pipe rather than ``prctl(PR_SET_PDEATHSIG)``: the death signal fires when the *thread*
that forked the child ends, not the process, so a control plane started from a worker thread
(``asyncio.to_thread``, a loop in a thread) would lose its programs while still in use; it
cannot delete a folder either, and macOS has no ``prctl``. A pipe's end-of-file is exactly
"the parent is gone", everywhere. A fork of the parent without exec would inherit the write end
and hold the pipe open: ``os.fork`` children close their copy at once (and never speak for the
parent), and for forks Python does not see (from C) the supervisor also notices its parent pid
change, checked every second.

Messages are lines: ``+PGID`` watch a group, ``-PGID`` forget one the parent has stopped and
reaped, ``done`` the parent has cleaned up itself. The supervisor runs in a session of its own
(a Ctrl-C or a group kill aimed at the parent's job does not reach it), treats SIGTERM and
SIGHUP like end-of-file, and is started as a plain file under ``python -I -S`` so that it imports
only the standard library: the parent never waits for it to start, and that costs nothing.

This file is both halves: :class:`Supervisor` is the parent's handle; run as a program, it is
the supervisor. The program half must stay standard-library only.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

__all__ = ["Supervisor"]

# How often the supervisor checks its parent pid, for the case where the pipe stays open.
PARENT_CHECK = 1.0
# How long the supervisor waits for SIGKILLed programs to die before deleting their folder.
KILL_WAIT = 10.0

# Supervisors not closed yet, closed at interpreter exit once the programs are stopped.
_open: set[Supervisor] = set()


@atexit.register
def _close_all() -> None:
    for supervisor in list(_open):
        supervisor.close()


def _let_go_in_fork() -> None:
    # A fork is not the parent: its exit must not end the parent's control plane, and its
    # copy of the write end would keep the supervisor from seeing the parent die.
    for supervisor in list(_open):
        supervisor._let_go()
    _open.clear()


os.register_at_fork(after_in_child=_let_go_in_fork)


class Supervisor:
    """The parent's end: starts the supervisor for ``workdir`` and tells it what to watch.

    Every method is safe from any thread, and after :meth:`close` does nothing.
    """

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._lock = threading.Lock()
        read_end, write_end = os.pipe()  # both close-on-exec: no other child inherits them
        try:
            self._popen = subprocess.Popen(
                [sys.executable, "-I", "-S", __file__, str(os.getpid()), str(workdir)],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
            )
        except BaseException:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
        self._write_end: int | None = write_end
        _open.add(self)

    @property
    def pid(self) -> int:
        return self._popen.pid

    def watch(self, pgid: int) -> None:
        """Have the process group ``pgid`` killed if this process dies before forgetting it."""
        self._send(f"+{pgid}\n")

    def forget(self, pgid: int) -> None:
        """The group is stopped and its leader reaped; its id may be reused from now on."""
        self._send(f"-{pgid}\n")

    def close(self, timeout: float = KILL_WAIT + 5.0) -> None:
        """Tell the supervisor the parent cleaned up after itself, and reap it.

        Groups still watched are killed, as after the parent's death: ``close`` may come from
        an ``atexit`` handler after a stop that could not kill everything.
        """
        self._send("done\n")
        with self._lock:
            if self._write_end is None:
                return
            os.close(self._write_end)
            self._write_end = None
        _open.discard(self)
        try:
            self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self._popen.kill()
            self._popen.wait()

    def _let_go(self) -> None:
        with self._lock:
            if self._write_end is not None:
                os.close(self._write_end)
                self._write_end = None

    def _send(self, line: str) -> None:
        with self._lock:
            # After close the descriptor number may belong to another file: never write then.
            if self._write_end is None:
                return
            # A short line to a pipe is one atomic write. A supervisor already dead (killed
            # from outside) cannot be helped here; the parent's own stop still works.
            with contextlib.suppress(BrokenPipeError):
                os.write(self._write_end, line.encode())


# -- the supervisor program ------------------------------------------------------------------


class _Stop(Exception):
    """SIGTERM or SIGHUP: clean up now, as if the parent had died."""


def _raise_stop(signum: int, frame: object) -> None:
    raise _Stop


_HAVE_PROC = os.path.exists("/proc/self/stat")


def _is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a reused pid owned by someone else: not ours any more
        return False
    # An orphan's zombie lingers until the new parent reaps it (PID 1 in a container may
    # never do so); it holds no files and runs nothing, so it counts as gone.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return not _HAVE_PROC  # gone since kill(0); without /proc (macOS) kill(0) is all
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _programs_naming(workdir: Path) -> list[int]:
    """Pids of this user's session leaders whose arguments name ``workdir``; Linux only.

    Covers the one moment the pipe cannot: a program forked but not yet announced when the
    parent died. Every program of a control plane leads a session of its own and names its
    folder (``--data-dir``, ``--cert-dir``), and the folder is a fresh ``mkdtemp``. Requiring
    both spares anything else that merely mentions the folder (``tail -f`` of a log in a shell).
    """
    needle = str(workdir).encode()
    uid = os.getuid()
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                if entry.stat().st_uid != uid:
                    continue
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    # After the command name: state, ppid, pgrp, session.
                    session = int(stat.read().rsplit(b")", 1)[1].split()[3])
                if session != int(entry.name):
                    continue
                with open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                    if needle in cmdline.read():
                        found.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
    return found


def _clean_up(workdir: Path, groups: set[int], *, parent_died: bool) -> None:
    # Nothing is worth keeping: the folder goes next. SIGKILL at once is the fast way out.
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    stray = _programs_naming(workdir) if parent_died else []
    for pid in stray:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    # etcd must have stopped writing before its data directory is deleted.
    deadline = time.monotonic() + KILL_WAIT
    while any(_is_running(pid) for pid in (*groups, *stray)) and time.monotonic() < deadline:
        time.sleep(0.01)
    shutil.rmtree(workdir, ignore_errors=True)


def _serve(parent: int, workdir: Path) -> None:
    groups: set[int] = set()
    pending = b""
    parent_died = True
    try:
        while True:
            readable, _, _ = select.select([0], [], [], PARENT_CHECK)
            if not readable:
                # Looked at only once the pipe is drained, so no announced group is missed.
                if os.getppid() != parent:
                    break  # reparented: the parent is gone, though a fork holds the pipe
                continue
            chunk = os.read(0, 4096)
            if not chunk:
                break
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                if line == b"done":
                    parent_died = False
                elif line[:1] == b"+":
                    groups.add(int(line[1:]))
                elif line[:1] == b"-":
                    groups.discard(int(line[1:]))
            if not parent_died:
                break
    except _Stop:
        pass
    # A second SIGTERM must not cut the cleanup short.
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    _clean_up(workdir, groups, parent_died=parent_died)


def _main(argv: list[str]) -> None:
    parent, workdir = int(argv[1]), Path(argv[2])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the parent decides on a Ctrl-C
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_stop)
    _serve(parent, workdir)
    # Nothing is left to flush; skipping the interpreter's teardown makes close() quicker.
    os._exit(0)


if __name__ == "__main__":
    _main(sys.argv)
