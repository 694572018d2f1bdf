"""The hello operator, logging each reconcile's start and end, for the sharding test.

Loaded by ``crdkit run tests/integration/runtime/_shard_operator.py:ShardLoggingReconciler
--shards --shard-id ID`` in separate processes; every line is ``<event> <pid> <shard> <key>
<generation>``, appended to the file named by ``RECONCILE_LOG`` with one ``write`` (atomic for
O_APPEND), so the processes share one log whose order is the order things happened.
"""

from __future__ import annotations

import asyncio
import os

from examples.hello.operator import Hello, HelloReconciler

from crdkit import Context


def _record(event: str, key: str, generation: int | None) -> None:
    line = f"{event} {os.getpid()} {os.environ['SHARD_ID']} {key} {generation}\n".encode()
    fd = os.open(os.environ["RECONCILE_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


class ShardLoggingReconciler(HelloReconciler):
    name = "shard-test"

    async def reconcile(self, ctx: Context, obj: Hello) -> None:
        key = f"{obj.metadata.namespace}/{obj.metadata.name}"
        _record("start", key, obj.metadata.generation)
        # Long enough that a hand-off racing a reconcile would show as an overlap.
        await asyncio.sleep(0.05)
        await super().reconcile(ctx, obj)
        _record("end", key, obj.metadata.generation)
