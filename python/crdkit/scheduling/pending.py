"""What a scheduling pass reads of one gang: its name (`GroupRef`), its pods sorted by where
they stand (`PendingGroup`), and its place in its priority's line.

`GroupReader` reads a group from the shared caches (the Pod informer's store, decoded once by
`PodReads`, and the PodGroup stores); it writes nothing, so the cycle that calls it stays a
function of what the caches hold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from crdkit.scheduling.gangs import GangPolicy, scheduling_gates
from crdkit.scheduling.groups import GROUP_APIS, GroupApiName, GroupCounts
from crdkit.scheduling.mirror import TERMINAL_PHASES, pod_key

if TYPE_CHECKING:
    from collections.abc import Callable

    from crdkit.resources import Pod
    from crdkit.runtime.store import Store
    from crdkit.scheduling.mirror import ClusterMirror
    from crdkit.scheduling.pod_reads import PodReads

__all__ = [
    "GROUP_INDEX",
    "NEVER",
    "GroupReader",
    "GroupRef",
    "PendingGroup",
    "arrival",
    "finished",
    "line_place",
]

GROUP_INDEX = "crdkit.io/gang"
"""The Pod store index of a scheduler's pods by group (``GroupRef`` text)."""

NEVER = datetime.max.replace(tzinfo=UTC)
"""The arrival of a gang none of whose objects has a creation time yet: last in line."""


@dataclass(frozen=True, order=True)
class GroupRef:
    """A gang: the PodGroup of an API (or ``pod`` for a pod in no group) in a namespace."""

    api: GroupApiName
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.api}/{self.namespace}/{self.name}"

    @classmethod
    def parse(cls, text: str) -> GroupRef:
        api, namespace, name = text.split("/", 2)
        if api not in GROUP_APIS:
            raise ValueError(f"group: unknown PodGroup API {api!r}")
        return cls(GROUP_APIS[api].name, namespace, name)


@dataclass
class PendingGroup:
    """One group's pods as a pass sees them."""

    ref: GroupRef
    pending: list[Pod] = field(default_factory=list)
    bound: list[Pod] = field(default_factory=list)
    gated: list[Pod] = field(default_factory=list)
    """Pending pods held by ``spec.schedulingGates``: not placed until their gates are gone."""
    counts: GroupCounts = field(default_factory=GroupCounts)
    podgroup: Any = None
    companion: Any = None
    """The object the PodGroup takes part of its policy from (`GroupApi.companion`), if any."""
    policy: GangPolicy = field(default_factory=GangPolicy)


def finished(pod: Pod) -> bool:
    return pod.status is not None and pod.status.phase in TERMINAL_PHASES


def arrival(group: PendingGroup) -> tuple[datetime, str, str]:
    """When the gang joined the queue, and its name: the order within a priority."""
    if group.podgroup is not None:
        stamps = [group.podgroup.metadata.creation_timestamp]
    else:
        stamps = [
            p.metadata.creation_timestamp for p in (*group.pending, *group.bound, *group.gated)
        ]
    known = [stamp for stamp in stamps if stamp is not None]
    return (min(known) if known else NEVER, group.ref.namespace, group.ref.name)


def line_place(group: PendingGroup, size_credit: float) -> tuple[datetime, str, str]:
    """Its place in its priority's line: its arrival, moved ahead by ``size_credit`` seconds
    for each doubling of its pods (Slurm's job-size factor), then its name. A big gang placed
    late waits for whole domains to drain while the small ones behind it could have gone
    anywhere; a credit bounded in seconds lets it overtake only gangs that arrived at most
    that much before it."""
    arrived, namespace, name = arrival(group)
    pods = len(group.pending) + len(group.bound) + len(group.gated)
    if arrived == NEVER or size_credit == 0 or pods < 2:
        return arrived, namespace, name
    return arrived - timedelta(seconds=size_credit * math.log2(pods)), namespace, name


class GroupReader:
    """Reads groups from the caches: pods by `GROUP_INDEX`, PodGroups by name, and the
    companion a PodGroup names (``companions``: an API's store of them)."""

    def __init__(
        self,
        reads: PodReads,
        mirror: ClusterMirror,
        podgroups: Callable[[GroupApiName], Store[Any]],
        companions: Callable[[GroupApiName], Store[Any]] | None = None,
    ) -> None:
        self._reads = reads
        self._mirror = mirror
        self._podgroups = podgroups
        self._companions = companions

    def pods(self, ref: GroupRef | str) -> list[Pod]:
        """Every cached pod of the group."""
        return self._reads.by_index(GROUP_INDEX, str(ref))

    def read(self, ref: GroupRef) -> PendingGroup | None:
        """The group as it stands; None when neither a pod of it nor its PodGroup exists."""
        pods = self.pods(ref)
        group = PendingGroup(ref)
        running = succeeded = failed = 0
        for pod in pods:
            phase = pod.status.phase if pod.status else None
            if phase == "Succeeded":
                succeeded += 1
            elif phase == "Failed":
                failed += 1
            elif pod.spec.node_name or self._mirror.is_counted(
                pod_key(pod.metadata.namespace, pod.metadata.name)
            ):
                group.bound.append(pod)
                running += phase == "Running"
            elif pod.metadata.deletion_timestamp is None:
                (group.gated if scheduling_gates(pod) else group.pending).append(pod)
        group.counts = GroupCounts(len(pods), len(group.bound), running, succeeded, failed)
        api = GROUP_APIS[ref.api]
        if api.model is not None:
            group.podgroup = self._podgroups(ref.api).get_by_name(ref.name, ref.namespace)
        if group.podgroup is not None and api.companion is not None and self._companions:
            name = api.companion_of(group.podgroup)
            if name:
                group.companion = self._companions(ref.api).get_by_name(name, ref.namespace)
        if not pods and group.podgroup is None:
            return None
        return group
