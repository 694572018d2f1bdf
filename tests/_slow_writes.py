"""What the sharding tests on FakeCluster (tests/unit/runtime/sharding,
tests/property/runtime) share: a client whose object writes take time, so that a sharder's
relabelling lasts while shards die, join and take over. Imported by module name (this folder
is on ``sys.path``, through tests/conftest.py)."""

from __future__ import annotations

import asyncio
from typing import Any

from crdkit.client import Client
from crdkit.resources import Lease


def slow_object_writes(client: Client, seconds: float) -> None:
    """Every patch of ``client`` but a Lease's takes ``seconds`` (of the loop's clock, virtual
    or not): label writes and acknowledgements lag, while Leases, and so who is alive and who
    is a member, stay on time."""
    patch = client.patch

    async def slow(kind: Any, *args: Any, **kwargs: Any) -> Any:
        if kind is not Lease:
            await asyncio.sleep(seconds)
        return await patch(kind, *args, **kwargs)

    client.patch = slow  # type: ignore[method-assign]
