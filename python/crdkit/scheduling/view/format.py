"""The scheduler's view, as data: what ``crdkit queue``, the web page (``crdkit scheduler
--ui``) and a bench read. Every field is plain JSON; times are epoch seconds.

One snapshot (`Snapshot`)::

    {
      "format": 1,
      "seq": 42,                      # grows by one with every snapshot the scheduler makes
      "scheduler": "crdkit-gang-scheduler",
      "time": 1733425000.5,
      "levels": ["zone", "spine", "leaf"],   # topology label keys, widest first
      "resource": "nvidia.com/gpu",   # what a node's cells count
      "nodes": [NodeView, ...],       # in topology order (zone, spine, leaf, name)
      "gangs": [GangView, ...],       # waiting gangs in line order, then running ones
      "queues": [QueueView, ...],     # empty without --queues
      "timeline": [TimelinePoint, ...],  # oldest first, a bounded window
      "starts": [StartRecord, ...],   # recent starts with a promise, oldest first
      "omitted": 0                    # gangs left out of "gangs" to keep the snapshot small
    }

The published form (the ConfigMap ``crdkit queue`` reads, `PUBLISHED_KEY`) is the same object
without ``nodes`` and ``timeline``.
"""

from __future__ import annotations

from typing import Literal, TypedDict

__all__ = [
    "FORMAT",
    "PUBLISHED_KEY",
    "PUBLISHING_RBAC",
    "GangView",
    "JobShare",
    "NodeView",
    "PublishedSnapshot",
    "QueueResourceView",
    "QueueView",
    "Snapshot",
    "StartRecord",
    "TimelinePoint",
    "published_name",
]

FORMAT = 1
"""The snapshot format's version; a reader refuses another."""

PUBLISHED_KEY = "queue.json"
"""The key of the published ConfigMap's ``data`` that holds the snapshot."""


PUBLISHING_RBAC = (("", "configmaps", ("get", "create", "patch")),)
"""What publishing the queue takes in the scheduler's home namespace (a ``home_rbac``)."""


def published_name(scheduler: str) -> str:
    """The ConfigMap the scheduler ``scheduler`` publishes its queue in."""
    return f"{scheduler}-queue"


class JobShare(TypedDict):
    job: str
    """The gang (``namespace/name`` of its group) holding the room, or for a pod of no gang
    of this scheduler ``namespace/owner`` (its controller's name, else the pod's)."""
    amount: int
    """How much of the snapshot's resource it holds on the node (whole units)."""


class NodeView(TypedDict):
    name: str
    path: list[str]
    """The node's value of each of ``levels`` ("" where it has no such label)."""
    capacity: int
    """Allocatable of the snapshot's resource, whole units."""
    ready: bool
    jobs: list[JobShare]
    held: str | None
    """The gang a reservation holds the node for, if any."""


class GangView(TypedDict):
    gang: str
    """``namespace/name`` of its group (a bare pod's own name)."""
    api: str
    """Its group API (`crdkit.scheduling.groups`)."""
    state: Literal["waiting", "running"]
    queue: str | None
    """Its queue, with --queues."""
    priority: int
    position: int | None
    """1-based place in the line of waiting gangs; None when running, or when it can never
    fit (it has no place in line)."""
    pods: int
    gpus: int
    """Of the snapshot's resource, the whole gang."""
    since: float
    """Waiting: since its group or first pod was created. Running: since it was bound."""
    expected_start: float | None
    """Waiting: the start promised now (``time`` or earlier means at the next pass); None
    when unknown."""
    expected_note: str
    """Why the start is unknown ("the gangs it waits for declare no run-time bound"), or ""."""
    promised: float | None
    """The first start it was promised, kept to compare with its actual start."""
    reserved: str | None
    """The domain held for it (the topology domain's name, or the nodes' count)."""
    reason: str
    """Why it waits, one short line ("" when running)."""
    never_fits: bool
    """It can never fit the cluster as it is (no node or domain is big enough)."""


class QueueResourceView(TypedDict):
    flavor: str
    resource: str
    nominal: int
    used: int
    borrowed: int


class QueueView(TypedDict):
    name: str
    parent: str | None
    weight: float
    share: float | None
    """Weighted dominant share, percent; None when not computed."""
    pending: int
    admitted: int
    resources: list[QueueResourceView]


class TimelinePoint(TypedDict):
    t: float
    held: int
    """Of the resource, on nodes a reservation holds."""
    bound: int
    """Of the resource, held by gangs whose every pod is bound."""
    total: int


class StartRecord(TypedDict):
    gang: str
    promised: float
    """The first start the gang was promised."""
    actual: float
    """When the scheduler placed it."""
    kept: bool
    """It started in the first pass at or after its promise, or earlier."""


class PublishedSnapshot(TypedDict):
    """What the scheduler publishes (`PUBLISHED_KEY`): a `Snapshot` without ``nodes`` and
    ``timeline``. A whole `Snapshot` is one too (it has these keys and more)."""

    format: int
    seq: int
    scheduler: str
    time: float
    levels: list[str]
    resource: str
    gangs: list[GangView]
    queues: list[QueueView]
    starts: list[StartRecord]
    omitted: int


class Snapshot(PublishedSnapshot):
    nodes: list[NodeView]
    timeline: list[TimelinePoint]
