"""Three shards of one ring on the real apiserver: one is SIGKILLed, one joins, one drains.

Every shard is its own ``crdkit run --shards`` process, and all append each reconcile's start
and end to one log. The checks are by order in that log, which a loaded machine cannot break:

- no object is ever being reconciled by two shards at once (a SIGKILLed shard's open
  reconciles end where the test wrote that it was killed);
- after every round of changes, every object is reconciled at its new generation;
- each object ends on the shard the hash ring of the live shards names, with no drain left,
  and each owned ConfigMap carries its owner's shard.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest
from _live import run_args
from _runtime_support import HELLO_CRD
from examples.hello.operator import Hello, HelloSpec

from crdkit.client import Client
from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.runtime.sharding import HashRing, drain_label, object_key, shard_label
from crdkit.testing import ControlPlane, eventually

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(420)]

OPERATOR = Path(__file__).with_name("_shard_operator.py")
ROOT = Path(__file__).resolve().parents[3]
RING = "shard-test"
OBJECTS = 24
# Short Leases so that a death is noticed in seconds; the defaults are 15/10/2.
LEASES = (
    "--leader-elect-lease-duration",
    "4",
    "--leader-elect-renew-deadline",
    "3",
    "--leader-elect-retry-period",
    "1",
)


def read_log(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


def overlaps(entries: list[list[str]]) -> list[str]:
    """Each moment, by log order, a shard started an object another shard was reconciling."""
    busy: dict[str, str] = {}  # key: the pid reconciling it
    problems = []
    for entry in entries:
        event, pid = entry[0], entry[1]
        if event == "killed":
            busy = {key: who for key, who in busy.items() if who != pid}
            continue
        key = entry[3]
        if event == "start":
            other = busy.get(key)
            if other is not None and other != pid:
                problems.append(f"{key}: started by {pid} while {other} reconciled it")
            busy[key] = pid
        elif busy.get(key) == pid:
            del busy[key]
    return problems


class Shards:
    """The shard processes, their stderr kept in tmp_path for a failed run's post-mortem."""

    def __init__(self, plane: ControlPlane, namespace: str, log: Path, tmp: Path) -> None:
        self.plane, self.namespace, self.log, self.tmp = plane, namespace, log, tmp
        self.processes: dict[str, asyncio.subprocess.Process] = {}

    async def start(self, shard: str) -> None:
        env = {
            **os.environ,
            "RECONCILE_LOG": str(self.log),
            "SHARD_ID": shard,
            "PYTHONPATH": str(ROOT),
        }
        args = run_args(
            f"{OPERATOR}:ShardLoggingReconciler",
            self.plane.kubeconfig_path,
            self.namespace,
            "--shards",
            "--shard-id",
            shard,
            *LEASES,
            "--graceful-shutdown-timeout",
            "10",
        )
        with (self.tmp / f"{shard}.stderr").open("ab") as stderr:
            self.processes[shard] = await asyncio.create_subprocess_exec(
                str(Path(sys.executable).with_name("crdkit")),
                *args,
                cwd=ROOT,
                env=env,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=stderr,
            )

    async def start_all(self, *shards: str) -> None:
        for shard in shards:
            await self.start(shard)

    async def kill(self, shard: str) -> None:
        process = self.processes.pop(shard)
        process.send_signal(signal.SIGKILL)
        await process.wait()
        # Written after the process is gone: its open reconciles end here, in log order.
        with self.log.open("a") as log:
            log.write(f"killed {process.pid}\n")

    async def drain(self, shard: str) -> None:
        process = self.processes.pop(shard)
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 60) == 0, f"shard {shard} exited badly"

    async def close(self) -> None:
        for process in self.processes.values():
            if process.returncode is None:
                process.kill()
                await process.wait()


def ring_key(namespace: str, name: str) -> str:
    return object_key("hello.example.com", "Hello", namespace, name)


async def settled(client: Client, namespace: str, live: set[str]) -> bool:
    """Every Hello on the shard the ring of ``live`` names, no drain, its ConfigMap beside it."""
    ring = HashRing(live)
    hellos = (await client.list(Hello, namespace=namespace)).items
    labels = {h.metadata.name: h.metadata.labels for h in hellos}
    for name, label in labels.items():
        want = ring.shard_for(ring_key(namespace, name or ""))
        if label.get(shard_label(RING)) != want or drain_label(RING) in label:
            return False
    maps = (await client.list(ConfigMap, namespace=namespace)).items
    owned = {m.metadata.name: m.metadata.labels.get(shard_label(RING)) for m in maps}
    return all(
        owned.get(f"{name}-greeting") == label.get(shard_label(RING))
        for name, label in labels.items()
    )


def reconciled_at(entries: list[list[str]], generations: dict[str, int]) -> bool:
    """Whether each object's current generation was reconciled to the end."""
    done = {(entry[3], entry[4]) for entry in entries if entry[0] == "end"}
    return all((key, str(generation)) in done for key, generation in generations.items())


async def change_all(client: Client, namespace: str, round_: int) -> dict[str, int]:
    generations = {}
    for i in range(OBJECTS):
        name = f"h{i:02d}"
        patched = await client.patch(
            Hello, name, {"spec": {"target": f"round-{round_}"}}, namespace=namespace
        )
        generations[f"{namespace}/{name}"] = patched.metadata.generation or 0
    return generations


async def test_three_shards_kill_one_add_one_drain_one(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str, tmp_path: Path
) -> None:
    await control_plane.install_crds([HELLO_CRD])
    for i in range(OBJECTS):
        await crdkit_client.create(
            Hello(
                metadata=ObjectMeta(name=f"h{i:02d}", namespace=namespace),
                spec=HelloSpec(target="x"),
            )
        )
    log = tmp_path / "reconciles.log"
    shards = Shards(control_plane, namespace, log, tmp_path)

    async def round_of_changes(round_: int, live: set[str]) -> None:
        generations = await change_all(crdkit_client, namespace, round_)
        await eventually(
            lambda: asyncio.sleep(0, reconciled_at(read_log(log), generations)),
            within=120,
            what=f"round {round_}: every object reconciled at its new generation",
        )
        await eventually(
            lambda: settled(crdkit_client, namespace, live),
            within=120,
            what=f"round {round_}: objects settled on {sorted(live)}",
        )

    # Each step, then the ring it must settle on, then a round of changes to every object.
    steps = [
        (lambda: shards.start_all("a", "b", "c"), {"a", "b", "c"}, "spread over a, b and c"),
        (lambda: shards.kill("a"), {"b", "c"}, "a's objects moved to b and c"),
        (lambda: shards.start("d"), {"b", "c", "d"}, "d took its share from b and c"),
        (lambda: shards.drain("b"), {"c", "d"}, "b's objects handed to c and d"),
    ]
    try:
        for round_, (step, live, what) in enumerate(steps, start=1):
            await step()
            await eventually(
                lambda live=live: settled(crdkit_client, namespace, live), within=180, what=what
            )
            await round_of_changes(round_, live)
    finally:
        await shards.close()

    entries = read_log(log)
    assert overlaps(entries) == []
    by_shard = {entry[2] for entry in entries if entry[0] == "start"}
    assert by_shard == {"a", "b", "c", "d"}, f"every shard reconciled something: {by_shard}"
