"""Leader fail-over benchmark: how long a crdkit operator's standby takes to replace its leader.

    python benches/leader_failover.py --rounds 5 --json

On one local control plane, two replicas of the hello operator (`crdkit run --leader-elect`,
controller-runtime's default timings: lease 15 s, renew deadline 10 s, retry 2 s) run side by
side. Each round waits until both are ready (caches synced) and one holds the Lease, then stops
the holder and measures until the other holds it:

- ``kill`` rounds: SIGKILL, so the Lease is never released and must expire. Reported:
  ``takeover_s`` per round (the new holder's ``acquireTime`` minus the moment of the kill), their
  median and maximum, and ``within_bound``: how many rounds stayed within
  ``lease_duration + retry_period`` (17 s), the bound the elector promises and
  tests/unit/runtime/test_leader.py checks on a virtual clock.
- one ``release`` round: SIGTERM, so the leader empties the Lease on its way out; reported as
  ``release_takeover_s`` (bounded by one retry period, 2 s).

The stopped replica is replaced by a fresh one before the next round. One JSON object on stdout.
These are real-time figures, so they depend on the machine's load: that is why they live here
and not in a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from crdkit.client import Client
from crdkit.client.errors import NotFound
from crdkit.resources import Lease
from crdkit.testing import ControlPlane
from runtime_bench import free_port, wait_ready

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HELLO_CRD = ROOT / "examples" / "hello" / "hello.example.com_hellos.yaml"
NAMESPACE = "default"
LEASE = "failover-bench"
LEASE_DURATION, RETRY_PERIOD = 15.0, 2.0


class Replica:
    """One `crdkit run` process of the hello operator, with its health port."""

    def __init__(self, process: asyncio.subprocess.Process, port: int) -> None:
        self.process = process
        self.port = port

    @classmethod
    async def start(cls, kubeconfig: Path) -> Replica:
        port = free_port()
        process = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).with_name("crdkit")),
            "run",
            "examples.hello.operator:HelloReconciler",
            "--kubeconfig",
            str(kubeconfig),
            "--namespace",
            NAMESPACE,
            "--leader-elect",
            "--leader-election-id",
            LEASE,
            "--leader-election-namespace",
            NAMESPACE,
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        replica = cls(process, port)
        await wait_ready(port, process, "/readyz")
        return replica

    async def stop(self, how: signal.Signals) -> float:
        """Send ``how``; return the wall-clock moment it was sent (Lease times are wall clock)."""
        sent = time.time()
        self.process.send_signal(how)
        await self.process.wait()
        return sent

    async def kill(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()


async def holder(client: Client) -> tuple[str | None, float | None]:
    """The Lease's holder identity and acquire time (epoch seconds), or (None, None)."""
    try:
        lease = await client.get(Lease, LEASE, namespace=NAMESPACE)
    except NotFound:
        return None, None
    acquired = lease.spec.acquire_time.timestamp() if lease.spec.acquire_time else None
    return lease.spec.holder_identity, acquired


async def wait_for_holder(client: Client, other_than: str | None) -> tuple[str, float]:
    """Poll until some replica other than ``other_than`` holds the Lease."""
    deadline = time.monotonic() + 10 * LEASE_DURATION
    while time.monotonic() < deadline:
        identity, acquired = await holder(client)
        if identity and identity != other_than and acquired is not None:
            return identity, acquired
        await asyncio.sleep(0.05)
    raise RuntimeError(f"no replica took the Lease from {other_than!r}")


async def main(rounds: int) -> dict[str, Any]:
    async with ControlPlane() as plane, Client.from_control_plane(plane) as client:
        await plane.install_crds([HELLO_CRD])
        leader = await Replica.start(plane.kubeconfig_path)
        current, _ = await wait_for_holder(client, other_than=None)
        standby = await Replica.start(plane.kubeconfig_path)
        kills: list[float] = []
        try:
            for number in range(rounds + 1):
                release = number == rounds
                stopped_at = await leader.stop(signal.SIGTERM if release else signal.SIGKILL)
                current, acquired = await wait_for_holder(client, other_than=current)
                if release:
                    release_takeover = acquired - stopped_at
                else:
                    kills.append(acquired - stopped_at)
                    leader, standby = standby, await Replica.start(plane.kubeconfig_path)
        finally:
            for replica in (leader, standby):
                await replica.kill()
    bound = LEASE_DURATION + RETRY_PERIOD
    return {
        "rounds": rounds,
        "lease_duration_s": LEASE_DURATION,
        "retry_period_s": RETRY_PERIOD,
        "bound_s": bound,
        "takeover_s": [round(t, 3) for t in kills],
        "takeover_median_s": round(statistics.median(kills), 3),
        "takeover_max_s": round(max(kills), 3),
        "within_bound": sum(t <= bound for t in kills),
        "release_takeover_s": round(release_takeover, 3),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="SIGKILL rounds (default 5)")
    parser.add_argument("--json", action="store_true", help="print only the JSON result")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    result = asyncio.run(main(args.rounds))
    print(json.dumps(result, indent=None if args.json else 2))
