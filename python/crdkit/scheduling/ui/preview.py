"""A made-up cluster that moves, to look at the page without a cluster::

    python -m crdkit.scheduling.ui.preview [--nodes 1024] [--bind 127.0.0.1:8090]

`synthetic_snapshot` makes a `Snapshot` of ``nodes`` GPU nodes in zones, spines and leaves with
gangs running, waiting and holding reservations; `step` moves it on by about ``fraction`` of its
nodes, as a busy scheduler's second does. `PreviewView` serves them as the scheduler's view
would (it has `seq`, `snapshot` and `changed`); the page's tests and the update bench use them
too, so what they measure is the shape of a real cluster's view, not a toy's.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import zlib
from typing import TYPE_CHECKING

from crdkit.scheduling.groups import POD_GROUP_APIS
from crdkit.scheduling.view.format import FORMAT

if TYPE_CHECKING:
    from crdkit.scheduling.view.format import (
        GangView,
        JobShare,
        NodeView,
        QueueView,
        Snapshot,
        StartRecord,
        TimelinePoint,
    )

__all__ = ["LEVELS", "PreviewView", "step", "synthetic_snapshot"]

LEVELS = ["topology.kubernetes.io/zone", "example.com/spine", "example.com/leaf"]

PREVIEW_API = POD_GROUP_APIS[0]
"""The group API the made-up gangs say they are of (any will do: the page only shows it)."""
GPUS = 8
_WINDOW = 300  # timeline points kept, as the scheduler keeps a bounded window
_STARTS = 50
_TEAMS = 7  # a job's namespace, and its queue when there are queues


def _queue(name: str, used: int, nominal: int) -> QueueView:
    return {
        "name": name,
        "parent": "research",
        "weight": 1.0,
        "share": round(100.0 * used / nominal, 1) if nominal else None,
        "pending": 0,
        "admitted": 0,
        "resources": [
            {
                "flavor": "default",
                "resource": "nvidia.com/gpu",
                "nominal": nominal,
                "used": used,
                "borrowed": max(0, used - nominal),
            }
        ],
    }


def synthetic_snapshot(
    nodes: int = 1024, *, seed: int = 0, now: float | None = None, queues: bool = False
) -> Snapshot:
    """``nodes`` nodes of `GPUS` GPUs, 16 to a leaf, 4 leaves to a spine, 4 spines to a zone,
    about two thirds of them busy; seq 1. ``queues``: one queue per team, as with --queues
    (the snapshots `step` makes from it keep them)."""
    rng = random.Random(seed)
    now = time.time() if now is None else now
    views: list[NodeView] = []
    for index in range(nodes):
        leaf, spine, zone = index // 16, index // 64, index // 256
        views.append(
            {
                "name": f"gpu-{index:04d}",
                "path": [f"zone-{zone}", f"spine-{spine}", f"leaf-{leaf}"],
                "capacity": GPUS,
                "ready": rng.random() > 0.005,
                "jobs": [],
                "held": None,
            }
        )
    snapshot: Snapshot = {
        "format": FORMAT,
        "seq": 1,
        "scheduler": "crdkit-gang-scheduler",
        "time": now,
        "levels": list(LEVELS),
        "resource": "nvidia.com/gpu",
        "nodes": views,
        "gangs": [],
        "queues": [_queue(f"team-{team}", 0, nodes * GPUS // _TEAMS) for team in range(_TEAMS)]
        if queues
        else [],
        "timeline": [],
        "starts": [],
        "omitted": 0,
    }
    job = 0
    for start in range(0, nodes, 4):
        if rng.random() < 0.66:
            job += 1
            size = rng.choice((1, 2, 4))
            name = f"team-{job % _TEAMS}/job-{job}"
            for view in views[start : start + size]:
                view["jobs"] = [{"job": name, "amount": GPUS}]
    return _with_gangs(snapshot)


def step(snapshot: Snapshot, *, seed: int, fraction: float = 0.05) -> Snapshot:
    """``snapshot`` one scheduler second later: about ``fraction`` of the nodes change (jobs
    end, new ones start, reservations move), the timeline gains a point, maybe a start is
    recorded; seq + 1. The given snapshot is not touched."""
    rng = random.Random(seed)
    now = snapshot["time"] + 1.0
    nodes = [node.copy() for node in snapshot["nodes"]]
    touched = rng.sample(range(len(nodes)), max(1, int(len(nodes) * fraction)))
    new_job = f"team-{rng.randrange(_TEAMS)}/job-s{snapshot['seq']}"
    for index in touched:
        node = nodes[index]
        roll = rng.random()
        if roll < 0.4:
            node["jobs"] = []
        elif roll < 0.8:
            share: JobShare = {"job": new_job, "amount": rng.choice((GPUS, GPUS // 2))}
            node["jobs"] = [share]
        else:
            node["held"] = None if node["held"] else "team-1/waiting-0"
    moved = _with_gangs({**snapshot, "seq": snapshot["seq"] + 1, "time": now, "nodes": nodes})
    if rng.random() < 0.3:
        promised = now - rng.uniform(-60, 120)
        record: StartRecord = {
            "gang": new_job,
            "promised": promised,
            "actual": now,
            "kept": now <= promised + 1.0,  # placed in the first pass at or after the promise
        }
        moved["starts"] = [*snapshot["starts"], record][-_STARTS:]
    return moved


def _with_gangs(snapshot: Snapshot) -> Snapshot:
    """The gangs, queue-less line and a new timeline point that go with the nodes. A gang's
    times stay put from one snapshot to the next, as a real one's do (it was created, bound or
    promised once), so that a delta carries what moved and not the clock."""
    now = snapshot["time"]
    origin = now - snapshot["seq"]  # the made-up cluster's first second
    held_by: dict[str, int] = {}
    running: dict[str, tuple[int, int]] = {}
    for node in snapshot["nodes"]:
        if node["held"]:
            held_by[node["held"]] = held_by.get(node["held"], 0) + 1
        for share in node["jobs"]:
            pods, gpus = running.get(share["job"], (0, 0))
            running[share["job"]] = (pods + 1, gpus + share["amount"])
    gangs: list[GangView] = []
    for position in range(1, 6):
        name = f"team-{position % 3}/waiting-{position - 1}"
        held = held_by.get(name)
        known = position % 3 != 0
        gangs.append(
            {
                "gang": name,
                "api": PREVIEW_API,
                "state": "waiting",
                "queue": None,
                "priority": 10 if position == 1 else 0,
                "position": position,
                "pods": 16,
                "gpus": 16 * GPUS,
                "since": origin - 60.0 * position,
                "expected_start": origin + 90.0 * position if known else None,
                "expected_note": "" if known else "the gangs it waits for declare no bound",
                "promised": origin + 80.0 * position if known else None,
                "reserved": f"{held} nodes" if held else None,
                "reason": "not now: 16 of 16 pods fit no leaf with room; leaves with room "
                "for 8 pods at most",
                "never_fits": False,
            }
        )
    for name, (pods, gpus) in sorted(running.items()):
        gangs.append(
            {
                "gang": name,
                "api": PREVIEW_API,
                "state": "running",
                "queue": None,
                "priority": 0,
                "position": None,
                "pods": pods,
                "gpus": gpus,
                "since": origin - zlib.crc32(name.encode()) % 3600,
                "expected_start": None,
                "expected_note": "",
                "promised": None,
                "reserved": None,
                "reason": "",
                "never_fits": False,
            }
        )
    total = sum(node["capacity"] for node in snapshot["nodes"])
    point: TimelinePoint = {
        "t": now,
        "held": sum(node["capacity"] for node in snapshot["nodes"] if node["held"]),
        "bound": sum(gpus for _, gpus in running.values()),
        "total": total,
    }
    queues = snapshot["queues"]
    if queues:
        for gang in gangs:
            gang["queue"] = gang["gang"].split("/", 1)[0]
        used: dict[str, int] = {}
        for name, (_, gpus) in running.items():
            team = name.split("/", 1)[0]
            used[team] = used.get(team, 0) + gpus
        queues = []
        for queue in snapshot["queues"]:
            row = _queue(
                queue["name"], used.get(queue["name"], 0), queue["resources"][0]["nominal"]
            )
            row["admitted"] = sum(
                g["state"] == "running" and g["queue"] == row["name"] for g in gangs
            )
            row["pending"] = sum(
                g["state"] == "waiting" and g["queue"] == row["name"] for g in gangs
            )
            queues.append(row)
    return {
        **snapshot,
        "gangs": gangs,
        "queues": queues,
        "timeline": [*snapshot["timeline"], point][-_WINDOW:],
    }


class PreviewView:
    """The scheduler's view of a made-up cluster that moves every ``interval`` seconds while
    `run` runs; the same three members as ``SchedulerView``."""

    def __init__(
        self, nodes: int = 1024, *, interval: float = 1.0, seed: int = 0, queues: bool = False
    ) -> None:
        self._snapshot = synthetic_snapshot(nodes, seed=seed, queues=queues)
        self._interval = interval
        self._changed = asyncio.Condition()

    @property
    def seq(self) -> int:
        return self._snapshot["seq"]

    def snapshot(self) -> Snapshot:
        return self._snapshot

    async def changed(self, after: int) -> int:
        async with self._changed:
            await self._changed.wait_for(lambda: self.seq > after)
            return self.seq

    async def advance(self) -> None:
        """One step now."""
        await self.show(step(self._snapshot, seed=self.seq))

    async def show(self, snapshot: Snapshot) -> None:
        """Make ``snapshot`` (numbered above the current one) the latest, and wake readers."""
        if snapshot["seq"] <= self.seq:
            raise ValueError(f"seq: {snapshot['seq']} is not above the current {self.seq}")
        self._snapshot = snapshot
        async with self._changed:
            self._changed.notify_all()

    async def run(self) -> None:
        """Step every ``interval`` seconds until cancelled."""
        while True:
            await asyncio.sleep(self._interval)
            await self.advance()


async def _serve(nodes: int, bind: str, interval: float, queues: bool) -> None:
    from crdkit.scheduling.ui.server import ViewServer

    view = PreviewView(nodes, interval=interval, queues=queues)
    server = ViewServer(view, bind)
    await server.start()
    print(f"the page of a made-up {nodes}-node cluster: {server.url}", flush=True)
    try:
        await view.run()
    finally:
        await server.close()


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--bind", default="127.0.0.1:8090")
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--queues", action="store_true", help="one queue per team")
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how one stops looking
        asyncio.run(_serve(args.nodes, args.bind, args.interval, args.queues))


if __name__ == "__main__":
    main()
