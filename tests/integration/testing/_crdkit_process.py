"""``crdkit`` run as a user runs it, in a process of its own, for the command-line tests."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

CRDKIT = str(Path(sys.executable).parent / "crdkit")


@contextlib.contextmanager
def crdkit(*args: str, stderr: bool = True) -> Iterator[subprocess.Popen[str]]:
    """``crdkit ARGS...`` as a process, its output piped (its stderr too, with ``stderr``).

    On the way out, after a failed assertion too: SIGTERM first, so crdkit stops its etcd and
    kube-apiserver; SIGKILL alone would orphan them and later tests would share the machine
    with them.
    """
    with subprocess.Popen(
        [CRDKIT, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if stderr else None,
        text=True,
    ) as process:
        try:
            yield process
        finally:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=45)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
