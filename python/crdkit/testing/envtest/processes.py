"""Child processes that always go away.

Each program runs in a session (and so a process group) of its own, with its output in a log
file. Stopping signals the whole group: SIGTERM, then SIGKILL once the grace period is over, so
nothing the program forked survives it. Stopping blocks; async callers run it in a thread.
Given a :class:`~crdkit.testing.envtest.supervisor.Supervisor`, a program is announced to it
while it runs, so it dies with this process even on SIGKILL.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from crdkit.testing.envtest.supervisor import Supervisor

__all__ = ["ManagedProcess", "free_ports", "stop_all"]

# Strong references: a control plane dropped without stop() must still be cleaned up at exit.
_running: set[ManagedProcess] = set()


def stop_all(grace: float = 2.0) -> None:
    """Stop every program still running; the last resort at interpreter exit.

    When a test run ends without stopping a control plane (an unhandled error, a plain
    ``sys.exit``), no kube-apiserver or etcd may outlive Python.
    """
    for process in list(_running):
        process.stop(grace)


atexit.register(stop_all)
# A fork is not the programs' parent: its exit must not stop the parent's programs.
os.register_at_fork(after_in_child=_running.clear)


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct ports the kernel reports free on ``host``.

    All sockets are held open until every port is chosen, so the ports differ from each other.
    Another program may still take one before it is used; callers retry on a failed start.
    """
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(sock)
            sock.bind((host, 0))
        return [int(sock.getsockname()[1]) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


class ManagedProcess:
    """One program started in its own process group, logging to ``log_path``."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        env: Mapping[str, str] | None = None,
        supervisor: Supervisor | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self._supervisor = supervisor
        with log_path.open("ab") as log:
            self._popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=dict(env) if env is not None else None,
                start_new_session=True,
            )
        _running.add(self)
        if supervisor is not None:
            supervisor.watch(self.pid)

    @property
    def pid(self) -> int:
        """The program's pid, which is also its process group id."""
        return self._popen.pid

    def poll(self) -> int | None:
        """The exit status, or None while it runs."""
        return self._popen.poll()

    def log_tail(self, lines: int = 40) -> str:
        """The end of the program's output, for error messages."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, sig)

    def _group_alive(self) -> bool:
        try:
            os.killpg(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # pragma: no cover - a reused pgid owned by someone else
            return False
        return True

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM the group, SIGKILL it after ``grace`` seconds, and reap the program."""
        if self._popen.returncode is None:
            self._signal_group(signal.SIGTERM)
            try:
                self._popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self._popen.wait()
        # The leader is gone; anything it forked into the group must follow it.
        deadline = time.monotonic() + grace
        while self._group_alive():
            if time.monotonic() > deadline:
                self._signal_group(signal.SIGKILL)
            time.sleep(0.02)
            if time.monotonic() > deadline + 5:
                # Still watched, so the supervisor kills what is left when this process ends.
                _running.discard(self)
                return
        _running.discard(self)
        if self._supervisor is not None:
            # Reaped and empty, the group's id is free for the kernel to reuse: the supervisor
            # must not kill it any more.
            self._supervisor.forget(self.pid)
