"""A reconciler that logs when each reconcile starts and ends, for the leader election test.

Loaded by ``crdkit run tests/integration/runtime/_leader_operator.py:LoggingReconciler`` in
separate processes; every line is ``<event> <pid> <wall time> <name>``, appended to the file
named by ``RECONCILE_LOG`` with one ``write`` (atomic for O_APPEND) so processes can share it.
"""

from __future__ import annotations

import asyncio
import os
import time

from examples.hello.operator import Hello

from crdkit import Context, Reconciler, Result


def _record(event: str, name: str) -> None:
    line = f"{event} {os.getpid()} {time.time():.6f} {name}\n".encode()
    fd = os.open(os.environ["RECONCILE_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


class LoggingReconciler(Reconciler[Hello]):
    name = "leader-test"

    async def reconcile(self, ctx: Context, obj: Hello) -> Result:
        name = obj.metadata.name or "?"
        _record("start", name)
        await asyncio.sleep(0.2)
        _record("end", name)
        return Result(requeue_after=0.1)  # keep reconciling: the log shows who is active
