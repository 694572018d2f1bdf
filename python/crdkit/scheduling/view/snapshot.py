"""``SchedulerView``: snapshots of the cluster as a `GangScheduler` sees it (`format`), made
beside the scheduler, read by the web page (`crdkit.scheduling.ui`) and published for
``crdkit queue`` (`publish`).

A snapshot is made every ``interval`` seconds when the scheduler's state moved (a pass ran, a
node or a pod's usage changed), and at least every `IDLE_EVERY` intervals for the timeline. It
reads the scheduler's parts and changes none of them; it runs on the event loop between
passes, so each snapshot reads one state.

Add it beside the scheduler (``crdkit scheduler`` does, and publishes unless
``--no-publish-queue``)::

    scheduler = GangScheduler("my-scheduler", levels)
    manager.add_runnable(scheduler)
    manager.add_runnable(SchedulerView(scheduler))
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from typing import TYPE_CHECKING, ClassVar

from crdkit.resources import Pod
from crdkit.runtime.runnable import Runnable
from crdkit.scheduling.mirror import pod_key
from crdkit.scheduling.view.format import FORMAT, PUBLISHING_RBAC
from crdkit.scheduling.view.gangs import GangSources, gang_key, gang_views
from crdkit.scheduling.view.nodes import node_views, timeline_point
from crdkit.scheduling.view.publish import QueuePublisher
from crdkit.scheduling.view.queues import queue_views

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable, Sequence

    from crdkit.runtime.manager import Manager
    from crdkit.runtime.reconciler import RbacRule
    from crdkit.runtime.store import Store
    from crdkit.scheduling.scheduler import GangScheduler
    from crdkit.scheduling.view.format import Snapshot, StartRecord, TimelinePoint

__all__ = ["DEFAULT_RESOURCE", "IDLE_EVERY", "SchedulerView"]

DEFAULT_RESOURCE = "nvidia.com/gpu"

IDLE_EVERY = 5
"""With nothing moving, a snapshot every this many intervals still (the timeline goes on)."""

STARTS_SHOWN = 256
"""The most recent starts with a promise a snapshot carries."""


class SchedulerView(Runnable):
    """See the module docstring. ``resource``: what a node's cells count. ``publish``: write
    the queue for ``crdkit queue`` every ``publish_every`` seconds when it changed.
    ``clock``: epoch seconds, for the snapshots' times."""

    needs_leader: ClassVar[bool] = True  # the scheduler's state exists where it runs
    # The published ConfigMap lives in the manager's home namespace, beside its Lease.
    home_rbac: ClassVar[Sequence[RbacRule]] = PUBLISHING_RBAC

    def __init__(
        self,
        scheduler: GangScheduler,
        *,
        interval: float = 1.0,
        resource: str = DEFAULT_RESOURCE,
        publish: bool = True,
        publish_every: float = 2.0,
        timeline: int = 600,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"interval: expected a number of seconds > 0, got {interval!r}")
        self.scheduler = scheduler
        self.interval = interval
        self.resource = resource
        self.publish = publish
        self.publish_every = publish_every
        self._clock = clock
        self._timeline: deque[TimelinePoint] = deque(maxlen=timeline)
        self._snapshot: Snapshot | None = None
        self._changed = asyncio.Event()
        self._moved: Hashable = None
        self._pods: Store[Pod] | None = None
        self.publisher: QueuePublisher | None = None
        self.build_seconds = 0.0
        """How long the last snapshot took to make (for the bench)."""

    @property
    def seq(self) -> int:
        """The number of the latest snapshot (0 before the first)."""
        return 0 if self._snapshot is None else self._snapshot["seq"]

    def snapshot(self) -> Snapshot:
        """The latest snapshot (made now if none was yet)."""
        if self._snapshot is None:
            self.refresh()
        assert self._snapshot is not None
        return self._snapshot

    async def changed(self, after: int) -> int:
        """Wait for a snapshot numbered above ``after``; its number."""
        while self.seq <= after:
            self._changed.clear()
            await self._changed.wait()
        return self.seq

    def setup(self, manager: Manager) -> None:
        self._pods = manager.informers.informer(Pod).store
        if self.publish:
            self.publisher = QueuePublisher(
                manager.client, self.scheduler.name, manager.home_namespace
            )

    async def run(self, manager: Manager) -> None:
        idle = 0
        last_publish = -self.publish_every
        try:
            while True:
                moved = self._state()
                if moved != self._moved or idle >= IDLE_EVERY or self._snapshot is None:
                    self._moved, idle = moved, 0
                    self.refresh()
                else:
                    idle += 1
                now = time.monotonic()
                if self.publisher is not None and now - last_publish >= self.publish_every:
                    last_publish = now
                    await self.publisher.publish(self.snapshot())
                await asyncio.sleep(self.interval)
        finally:
            if self.publisher is not None:
                # The last word on stopping: the starts made since the last write, and the
                # line as the scheduler leaves it (a moment at most; stopping goes on after).
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    async with asyncio.timeout(2.0):
                        await self.publisher.publish(self.refresh())

    def _state(self) -> Hashable:
        scheduler = self.scheduler
        mirror = scheduler.mirror
        return (mirror.nodes_version, mirror.usage_version, scheduler.passes)

    def refresh(self) -> Snapshot:
        """Make a snapshot now, and wake those waiting for one."""
        started = time.perf_counter()
        scheduler = self.scheduler
        now = self._clock()
        gangs = gang_views(self._sources(), self.resource, now)
        held_for = {r.id: gang_key(r.holder) for r in scheduler.reservations.values()}
        nodes = node_views(
            scheduler.mirror, scheduler.levels, self.resource, self._job_of, held_for
        )
        running = {row["gang"]: row["gpus"] for row in gangs if row["state"] == "running"}
        self._timeline.append(timeline_point(now, nodes, running))
        starts: list[StartRecord] = [
            {
                "gang": gang_key(record.gang),
                "promised": record.promised,
                "actual": record.actual,
                "kept": record.kept,
            }
            for record in list(scheduler.outlook.starts)[-STARTS_SHOWN:]
        ]
        snapshot: Snapshot = {
            "format": FORMAT,
            "seq": self.seq + 1,
            "scheduler": scheduler.name,
            "time": now,
            "levels": list(scheduler.levels),
            "resource": self.resource,
            "nodes": nodes,
            "gangs": gangs,
            "queues": queue_views(scheduler.quota_gate),
            "timeline": list(self._timeline),
            "starts": starts,
            "omitted": 0,
        }
        self._snapshot = snapshot
        self._changed.set()
        self.build_seconds = time.perf_counter() - started
        return snapshot

    def _sources(self) -> GangSources:
        scheduler = self.scheduler
        assert self._pods is not None, "the view reads pods once it is set up"
        reads = scheduler.pod_reads()
        return GangSources(
            pods=self._pods,
            read=reads.get,
            requests=scheduler.mirror.requests,
            node_of=scheduler.mirror.node_of,
            line=scheduler.queue,
            reporter=scheduler.reporter,
            outlook=scheduler.outlook,
            reservations=scheduler.reservations,
            gate=scheduler.quota_gate,
        )

    def _job_of(self, key: str) -> str:
        """The job a counted pod belongs to: its gang, else its controller, else itself."""
        pod = self.scheduler.pod_reads().get(key)
        if pod is None:
            return key
        ref = self.scheduler.group_of(pod)
        if ref is not None:
            return gang_key(ref)
        owners = pod.metadata.owner_references or ()
        namespace = pod.metadata.namespace or "default"
        return f"{namespace}/{owners[0].name}" if owners else pod_key(namespace, pod.metadata.name)
