"""Which gang a watch event is about, and what it wakes.

A pod is this scheduler's when its ``spec.schedulerName`` names it; its gang is the PodGroup
it joins (`crdkit.scheduling.groups.pod_group_of`), or the pod alone. `GangEvents` indexes the
shared Pod store by gang, marks the gang of every changed pod or PodGroup in the queue, wakes
every waiting gang when capacity frees, and holds a finished pod's node while the rest of its
gang still runs (`crdkit.scheduling.settling`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from crdkit.scheduling.groups import BARE_POD, GROUP_APIS, GroupApiName, pod_group_of
from crdkit.scheduling.mirror import pod_key
from crdkit.scheduling.pending import GROUP_INDEX, GroupRef, finished

if TYPE_CHECKING:
    from collections.abc import Callable

    from crdkit.resources import Pod
    from crdkit.runtime.informer import Informer
    from crdkit.scheduling.mirror import ClusterMirror
    from crdkit.scheduling.pod_reads import PodReads
    from crdkit.scheduling.queue import GangQueue
    from crdkit.scheduling.rank_rules import RankRuleIndex
    from crdkit.scheduling.reporting import Reporter
    from crdkit.scheduling.settling import Settling

__all__ = ["GangEvents"]


class GangEvents:
    """See the module docstring. ``name`` is the scheduler's (pods give it in
    ``spec.schedulerName``)."""

    def __init__(
        self,
        name: str,
        mirror: ClusterMirror,
        queue: GangQueue,
        reporter: Reporter,
        settling: Settling,
        clock: Callable[[], float],
    ) -> None:
        self._name = name
        self._mirror = mirror
        self._queue = queue
        self._reporter = reporter
        self._settling = settling
        self._clock = clock
        self._reads: PodReads | None = None
        self._rank_rules: RankRuleIndex | None = None

    def watch(
        self,
        pods: Informer[Pod],
        reads: PodReads,
        rank_rules: RankRuleIndex,
    ) -> None:
        """Index ``pods`` by gang and handle their events (the PodGroups' are handled from
        `watch_pod_groups`)."""
        self._reads = reads
        self._rank_rules = rank_rules
        pods.store.add_indexer(GROUP_INDEX, self._group_index)
        pods.add_event_handler(self._pod_changed, self._pod_updated, self._pod_deleted)
        self._mirror.on_capacity_freed(self._capacity_freed)

    def watch_pod_groups(
        self,
        api: GroupApiName,
        informer: Informer[Any],
        companions: Informer[Any] | None = None,
    ) -> None:
        """Handle the events of ``api``'s PodGroups (at setup, or once its CRD is served), and
        of the companion objects they take part of their policy from."""
        informer.add_event_handler(*self._podgroup_handlers(api))
        if companions is not None:
            companions.add_event_handler(*self._companion_handlers(api, informer))

    def placed_on(self, pod: Pod) -> str | None:
        """The node ``pod`` holds: its own, or the one its bind under way assumed."""
        return pod.spec.node_name or self._mirror.node_of(
            pod_key(pod.metadata.namespace, pod.metadata.name)
        )

    def group_of(self, pod: Pod) -> GroupRef | None:
        """The gang ``pod`` belongs to, if this scheduler places it."""
        if pod.spec.scheduler_name != self._name:
            return None
        namespace = pod.metadata.namespace or "default"
        found = pod_group_of(pod)
        if found is None:
            return GroupRef(BARE_POD, namespace, pod.metadata.name or "")
        api, group = found
        return GroupRef(api, namespace, group)

    def _group_index(self, pod: Pod) -> list[str]:
        ref = self.group_of(pod)
        return [] if ref is None else [str(ref)]

    def _pod_changed(self, pod: Pod) -> None:
        ref = self.group_of(pod)
        if ref is not None:
            self._queue.mark(ref)

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        self._pod_changed(new)
        if finished(new) and not finished(old):
            self._pod_ended(new)

    def _pod_deleted(self, pod: Pod) -> None:
        key = pod_key(pod.metadata.namespace, pod.metadata.name)
        if self._reads is not None:
            self._reads.forget(key)
        if self._rank_rules is not None:
            self._rank_rules.forget(key)
        self._pod_changed(pod)
        if not finished(pod):
            self._pod_ended(pod)

    def _pod_ended(self, pod: Pod) -> None:
        """A bound pod of one of its gangs finished or went: hold its node while the rest of
        the gang still runs (the mirror has already counted the node free)."""
        ref, node = self.group_of(pod), pod.spec.node_name
        if ref is None or GROUP_APIS[ref.api].model is None or not node or self._reads is None:
            return
        others = any(
            p.metadata.uid != pod.metadata.uid and p.spec.node_name and not finished(p)
            for p in self._reads.by_index(GROUP_INDEX, str(ref))
        )
        deadline = self._settling.pod_ended(str(ref), node, others)
        if deadline is not None:
            delay = max(deadline - self._clock(), 0.0)
            asyncio.get_running_loop().call_later(delay, self._settling.expire)

    def _podgroup_handlers(
        self, api: GroupApiName
    ) -> tuple[Callable[[Any], None], Callable[[Any, Any], None], Callable[[Any], None]]:
        def changed(podgroup: Any) -> None:
            namespace = podgroup.metadata.namespace or "default"
            ref = GroupRef(api, namespace, podgroup.metadata.name or "")
            self._reporter.status_unwritten(ref)  # the next write compares with what it says
            self._queue.mark(ref)

        return changed, lambda _old, new: changed(new), changed

    def _companion_handlers(
        self, api: GroupApiName, podgroups: Informer[Any]
    ) -> tuple[Callable[[Any], None], Callable[[Any, Any], None], Callable[[Any], None]]:
        """A companion changed (a Workload made after its PodGroups, say): mark the PodGroups
        that name it."""
        adapter = GROUP_APIS[api]

        def changed(companion: Any) -> None:
            namespace = companion.metadata.namespace or "default"
            for podgroup in podgroups.store.list():  # rare events: a scan costs nothing
                if (
                    podgroup.metadata.namespace == namespace
                    and adapter.companion_of(podgroup) == companion.metadata.name
                ):
                    self._queue.mark(GroupRef(api, namespace, podgroup.metadata.name or ""))

        return changed, lambda _old, new: changed(new), changed

    def _capacity_freed(self) -> None:
        self._queue.mark_all(self._reporter.waiting)
