"""Two operator processes with leader election: the leader is SIGKILLed, the other takes over.

Both processes append every reconcile's start and end to one log. The test checks that the
follower does nothing while the leader lives, takes the Lease after the kill, and that no
reconcile of one process overlapped one of the other: ordering, which a loaded machine cannot
break. The takeover bound (lease duration + retry period) is checked on a virtual clock in
tests/unit/runtime/test_leader.py; benches/leader_failover.py measures it in real time. The
survivor then gets SIGTERM and must exit cleanly, its last reconcile finished.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest
from _runtime_support import eventually, three_hellos

from crdkit.client import Client
from crdkit.resources import Lease
from crdkit.testing import ControlPlane

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(180)]

OPERATOR = Path(__file__).with_name("_leader_operator.py")
ROOT = Path(__file__).resolve().parents[3]


def read_log(path: Path) -> list[tuple[str, int, float, str]]:
    if not path.exists():
        return []
    entries = []
    for line in path.read_text().splitlines():
        event, pid, at, name = line.split()
        entries.append((event, int(pid), float(at), name))
    return entries


async def start_operator(
    control_plane: ControlPlane, namespace: str, log: Path, stderr: BinaryIO
) -> asyncio.subprocess.Process:
    env = {**os.environ, "RECONCILE_LOG": str(log), "PYTHONPATH": str(ROOT)}
    return await asyncio.create_subprocess_exec(
        str(Path(sys.executable).with_name("crdkit")),
        "run",
        f"{OPERATOR}:LoggingReconciler",
        "--kubeconfig",
        str(control_plane.kubeconfig_path),
        "--namespace",
        namespace,
        "--leader-elect",
        "--leader-election-id",
        "leader-test",
        "--metrics-bind-address",
        "0",
        "--health-probe-bind-address",
        "0",
        "--graceful-shutdown-timeout",
        "10",
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=stderr,
    )


def intervals(
    entries: list[tuple[str, int, float, str]], pid: int, killed_at: float
) -> list[tuple[float, float]]:
    """(start, end) of each reconcile of ``pid``; one cut short by SIGKILL ends at the kill."""
    open_starts: dict[str, float] = {}
    spans = []
    for event, who, at, name in entries:
        if who != pid:
            continue
        if event == "start":
            open_starts[name] = at
        else:
            spans.append((open_starts.pop(name), at))
    spans.extend((start, killed_at) for start in open_starts.values())
    return spans


@pytest.fixture
def stderr_files(tmp_path: Path) -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """Where the two operators' own logs go: kept in tmp_path for a failed run's post-mortem."""
    with (
        (tmp_path / "leader.stderr").open("wb") as first,
        (tmp_path / "follower.stderr").open("wb") as second,
    ):
        yield first, second


async def test_leader_killed_follower_takes_over_without_overlap(
    control_plane: ControlPlane,
    crdkit_client: Client,
    namespace: str,
    tmp_path: Path,
    stderr_files: tuple[BinaryIO, BinaryIO],
) -> None:
    await three_hellos(control_plane, crdkit_client, namespace)
    log = tmp_path / "reconciles.log"
    leader_err, follower_err = stderr_files
    leader = await start_operator(control_plane, namespace, log, leader_err)
    follower: asyncio.subprocess.Process | None = None
    try:

        async def leader_reconciling() -> bool:
            return any(pid == leader.pid for _, pid, _, _ in read_log(log))

        await eventually(leader_reconciling, within=60, what="first process reconciling")
        follower = await start_operator(control_plane, namespace, log, follower_err)
        await asyncio.sleep(5)  # the follower syncs its caches and must stay idle meanwhile
        assert not any(pid == follower.pid for _, pid, _, _ in read_log(log)), (
            "the follower reconciled while the leader held the lease"
        )
        lease = await crdkit_client.get(Lease, "leader-test", namespace=namespace)
        first_holder = lease.spec.holder_identity
        assert first_holder

        leader.send_signal(signal.SIGKILL)
        killed_at = time.time()
        await leader.wait()
        assert follower.returncode is None

        async def follower_reconciling() -> bool:
            return any(pid == follower.pid for _, pid, _, _ in read_log(log))

        await eventually(follower_reconciling, within=120, what="follower reconciling")
        lease = await crdkit_client.get(Lease, "leader-test", namespace=namespace)
        assert lease.spec.holder_identity not in (None, first_holder)
        assert lease.spec.lease_transitions == 1
        assert lease.spec.acquire_time is not None
        assert lease.spec.acquire_time.timestamp() > killed_at - 1, "acquired after the kill"

        await asyncio.sleep(1)
        follower.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(follower.wait(), 30) == 0
    finally:
        for process in (leader, follower):
            if process is not None and process.returncode is None:
                process.kill()
                await process.wait()

    entries = read_log(log)
    assert follower is not None
    leader_spans = intervals(entries, leader.pid, killed_at)
    follower_spans = intervals(entries, follower.pid, float("inf"))
    assert leader_spans
    assert follower_spans
    assert all(end != float("inf") for _, end in follower_spans), (
        "SIGTERM must let the in-flight reconcile finish"
    )
    for a_start, a_end in leader_spans:
        for b_start, b_end in follower_spans:
            assert a_end <= b_start or b_end <= a_start, (
                f"reconciles overlapped: leader {a_start:.3f}-{a_end:.3f}, "
                f"follower {b_start:.3f}-{b_end:.3f}"
            )
    first_follower = min(start for start, _ in follower_spans)
    assert first_follower > killed_at
