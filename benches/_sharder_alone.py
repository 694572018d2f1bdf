"""The sharder on its own, for ``sharding_bench.py``: what assigning and moving costs it.

    python benches/_sharder_alone.py KUBECONFIG NAMESPACE OBJECTS LEASE_DURATION [CONCURRENCY]

On a namespace whose ``OBJECTS`` RuntimeBenchItems carry no shard label yet, this process
holds three shard Leases of ring ``alone`` itself (renewing them, as three shards would) and
runs a :class:`~crdkit.runtime.sharding.Sharder`. It reports, as one JSON object on stdout:
the time and this process's CPU until every object is assigned; then, after it stops renewing
one Lease, the time from then until every object of that shard has moved, and the CPU that took.
No shard reconciles anything, so the CPU is the sharder's (the three renewals aside).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from crdkit.client import Client
from crdkit.resources import Lease, LeaseSpec, ObjectMeta
from crdkit.runtime.sharding import RING_LABEL, SHARD_ID_LABEL, Sharder, lease_name
from runtime_bench_operators import RuntimeBenchItem

RING = "alone"
SHARDS = ("s0", "s1", "s2")


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def renew(client: Client, namespace: str, shard: str, duration: int) -> None:
    name = lease_name(RING, shard)
    now = datetime.now(UTC)
    await client.create(
        Lease(
            metadata=ObjectMeta(
                name=name,
                namespace=namespace,
                labels={RING_LABEL: RING, SHARD_ID_LABEL: shard},
            ),
            spec=LeaseSpec(
                holder_identity=shard,
                lease_duration_seconds=duration,
                acquire_time=now,
                renew_time=now,
            ),
        )
    )
    while True:
        await asyncio.sleep(2)
        lease = await client.get(Lease, name, namespace=namespace)
        lease.spec.renew_time = datetime.now(UTC)
        await client.replace(lease)


def labelled(sharder: Sharder) -> dict[str, str | None]:
    return {name: shard for (_, name), shard in sharder.assignments(RuntimeBenchItem).items()}


async def main(
    kubeconfig: str, namespace: str, objects: int, duration: int, concurrency: int = 16
) -> dict[str, float]:
    async with await Client.from_kubeconfig(kubeconfig) as client:
        renewers = {s: asyncio.create_task(renew(client, namespace, s, duration)) for s in SHARDS}
        await asyncio.sleep(0.5)
        sharder = Sharder(
            client,
            ring=RING,
            lease_namespace=namespace,
            primary_kinds=[RuntimeBenchItem],
            namespace=namespace,
            concurrency=concurrency,
        )
        cpu0, started = cpu_s(), time.perf_counter()
        running = asyncio.create_task(sharder.run())
        # Counted by the sharder's own figures: polling its cache would cost more CPU than
        # the sharder spends.
        while sharder.stats.writes["assign"] < objects:  # noqa: ASYNC110 - the poll is the clock
            await asyncio.sleep(0.05)
        while not all((owners := labelled(sharder)).values()):  # noqa: ASYNC110
            await asyncio.sleep(0.2)  # its cache catching up with its writes
        result = {
            "assign_s": time.perf_counter() - started,
            "assign_cpu_s": cpu_s() - cpu0,
            "assign_writes": sum(sharder.stats.writes.values()),
        }
        victim = SHARDS[-1]
        moving = {name for name, shard in owners.items() if shard == victim}
        renewers[victim].cancel()
        cpu0, stopped = cpu_s(), time.perf_counter()
        while sharder.stats.writes["assign"] < objects + len(moving):  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        while True:
            owners = labelled(sharder)
            if not any(owners.get(name) in (None, victim) for name in moving):
                break
            await asyncio.sleep(0.2)  # its cache catching up with its writes
        result.update(
            {
                "moved": len(moving),
                "rebalance_s": time.perf_counter() - stopped,
                "rebalance_cpu_s": cpu_s() - cpu0,
                "rss_mb": rss_mb(),
                "lease_duration_s": duration,
            }
        )
        running.cancel()
        for task in (*renewers.values(), running):
            task.cancel()
        await asyncio.gather(running, *renewers.values(), return_exceptions=True)
        return result


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    kubeconfig, namespace, count, lease = sys.argv[1:5]
    writers = int(sys.argv[5]) if len(sys.argv) > 5 else 16
    print(json.dumps(asyncio.run(main(kubeconfig, namespace, int(count), int(lease), writers))))
