"""What the sharding tests on FakeCluster (tests/unit/runtime/sharding, tests/property/runtime)
build their replicas with: a virtual-clock manager that is one shard of a ring, its Leases in
the namespace it watches. Imported by module name (this folder is on ``sys.path``, through
tests/conftest.py)."""

from __future__ import annotations

from typing import Any

from crdkit.client import Client
from crdkit.runtime import Manager
from crdkit.testing import virtual_clock_manager


def shard_manager(
    client: Client,
    namespace: str,
    ring: str,
    shard: str,
    *,
    identity: str | None = None,
    **options: Any,
) -> Manager:
    """A manager that is shard ``shard`` of ``ring``, watching ``namespace``; ``identity``
    (default: the shard) names it in the Leases; ``options``: more Manager options
    (``shard_role``, ``max_concurrent_reconciles``)."""
    return virtual_clock_manager(
        client,
        namespace=namespace,
        sharding=True,
        shard_ring=ring,
        shard_id=shard,
        leader_election_namespace=namespace,
        identity=identity or shard,
        **options,
    )
