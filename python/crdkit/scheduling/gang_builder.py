"""Whether a gang is ready to place, and its placer gang if so.

`GangBuilder.gang_for` turns a group as a pass read it (`crdkit.scheduling.pending`) into a
`GangRequest`, or tells the `Reporter` why it waits: its PodGroup is missing or invalid (its
pods' priority not the one it declares, for one), too few
of its pods exist, scheduling gates hold too many of them, a pod asks for what the placer cannot
honour, or its bound pods already span several domains of the level it must keep to (then a
gang left partly bound is rolled back). It adds what the placer needs beyond the pods: the nodes
rank rules keep a task off, and, for a partly bound gang, the domain its bound pods share.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from crdkit.scheduling.decisions import Decision, RollBack, marked_for_preemption
from crdkit.scheduling.gang_records import evolve_gang, evolve_task, level_name
from crdkit.scheduling.gangs import GangRequest, build_gang, pod_role, scheduling_gates
from crdkit.scheduling.groups import GROUP_APIS
from crdkit.scheduling.mirror import pod_key

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from crdkit.resources import Pod
    from crdkit.scheduling.mirror import ClusterMirror
    from crdkit.scheduling.options import SchedulerOptions
    from crdkit.scheduling.pending import PendingGroup
    from crdkit.scheduling.rank_rules import RankRuleIndex
    from crdkit.scheduling.reporting import Reporter

__all__ = ["GangBuilder", "torn"]


def torn(group: PendingGroup, mirror: ClusterMirror) -> bool:
    """Partly bound, short of ``minMember``, none running and no bind of it under way: what a
    scheduler stopped mid-bind leaves. (A gang bound at its minimum whose further pods do not
    fit is whole: those pods just wait.)"""
    counts = group.counts
    return (
        bool(group.bound)
        and counts.bound + counts.succeeded < group.policy.min_member
        and not counts.running
        and not any(
            mirror.is_assumed(pod_key(p.metadata.namespace, p.metadata.name)) for p in group.bound
        )
    )


class GangBuilder:
    """See the module docstring."""

    def __init__(
        self,
        levels: Sequence[str],
        options: SchedulerOptions,
        mirror: ClusterMirror,
        rank_rules: RankRuleIndex,
        reporter: Reporter,
    ) -> None:
        self._levels = list(levels)
        self._default_topology = options.default_topology
        self._by_size = options.topology_by_size  # the largest first
        self._mirror = mirror
        self._rank_rules = rank_rules
        self._reporter = reporter

    def gang_for(self, group: PendingGroup, out: list[Decision]) -> GangRequest | None:
        """The gang to place for ``group``, or None (with the reason told) when it waits."""
        ref, reporter = group.ref, self._reporter
        if any(
            marked_for_preemption(pod) and pod.metadata.deletion_timestamp is None
            for pod in group.bound
        ):
            # An eviction cut short: a scheduler marked the victims, then stopped before it
            # deleted them all. The marks outlive the decision; finish it. Taken for a gang
            # torn mid-bind, the survivors were made whole again, and the preemptor, still
            # short of room, evicted a second gang (crash tests: kill-before on a victim's
            # second delete).
            out.append(RollBack(group, evicting=True))
            return None
        if not group.pending and not group.gated:
            reporter.waiting.discard(ref)
            return None
        if GROUP_APIS[ref.api].model is not None and group.podgroup is None:
            message = f"PodGroup {ref.namespace}/{ref.name} does not exist"
            reporter.wait(group, "PodGroupNotFound", message, out)
            return None
        try:
            group.policy = GROUP_APIS[ref.api].policy(group.podgroup, self._levels, group.companion)
        except ValueError as error:
            reporter.wait(group, "InvalidPodGroup", str(error), out)
            return None
        rule = group.policy.priority
        refusal = rule and rule.refusal([*group.pending, *group.gated, *group.bound])
        if refusal:
            reporter.wait(group, "InvalidPodGroup", refusal, out)
            return None
        needed = group.policy.min_member - len(group.bound)
        if group.gated and needed > len(group.pending):
            gates = sorted({gate for pod in group.gated for gate in scheduling_gates(pod)})
            message = (
                f"{len(group.gated)} of the gang's pods are held by scheduling gates "
                f"({', '.join(gates)}); the gang is placed once enough of them are released"
            )
            reporter.wait(group, "SchedulingGated", message, out)
            return None
        if not group.pending:
            reporter.waiting.discard(ref)
            return None
        if needed > len(group.pending):
            have = len(group.pending) + len(group.bound)
            message = f"{have} of the {group.policy.min_member} pods of the gang exist"
            topic = f"WaitingForPods/{group.policy.min_member}"
            reporter.wait(group, "WaitingForPods", message, out, topic=topic)
            return None
        roles: dict[str, int] = {}
        for pod in group.bound:  # minTaskMember counts the bound pods of each task too
            role = pod_role(pod)
            roles[role] = roles.get(role, 0) + 1
        try:
            request = build_gang(
                str(ref),
                group.pending,
                needed=max(needed, 1),
                policy=group.policy,
                levels=self._levels,
                default_topology=self._default_for(group),
                bound_by_role=roles,
                priority=max((p.spec.priority or 0 for p in group.pending), default=0),
                requests_of=self._mirror.requests,  # parsed once, as the pod came
            )
        except ValueError as error:
            reporter.wait(group, "InvalidPod", str(error), out)
            return None
        request = self._avoid_rank_rules(request, group)
        if group.bound and needed > 0:
            kept = self._stay_beside(request, group.bound)
            if kept is None:
                # Its bound pods already span several domains of the level the gang must keep
                # to: no placement of the rest can make it whole there.
                if torn(group, self._mirror):
                    out.append(RollBack(group))
                else:
                    level = level_name(request.record, "required")
                    message = (
                        f"the gang's {len(group.bound)} bound pods span several {level} domains"
                    )
                    reporter.wait(group, "Unschedulable", message, out)
                return None
            request = kept
        return request

    def _default_for(self, group: PendingGroup) -> Mapping[str, Any] | None:
        """The topology rule the gang's size reaches (its ``minMember`` or its pods, the
        larger), else the default."""
        size = max(
            group.policy.min_member, len(group.pending) + len(group.bound) + len(group.gated)
        )
        for pods, topology in self._by_size:
            if size >= pods:
                return topology
        return self._default_topology

    def _avoid_rank_rules(self, request: GangRequest, group: PendingGroup) -> GangRequest:
        """Keep each task off the nodes whose placed pods its rank rules match, or whose own
        rank rules match its pods (`crdkit.scheduling.rank_rules`)."""
        if not request.rules and not self._rank_rules.has_carriers(group.ref.namespace):
            return request  # no rule of its own, and none of a pod that could name it
        pending = frozenset(pod_key(p.metadata.namespace, p.metadata.name) for p in group.pending)
        tasks = []
        for task in request.record.tasks:
            avoided = self._rank_rules.avoided(
                request.rules.get(task.name, ()), request.pods[task.name], pending
            )
            tasks.append(evolve_task(task, avoid_nodes=sorted(avoided)) if avoided else task)
        return replace(request, record=evolve_gang(request.record, tasks=tasks))

    def _stay_beside(self, request: GangRequest, bound: Sequence[Pod]) -> GangRequest | None:
        """Keep a partly bound gang's missing pods inside the domain its bound pods share at
        the gang's ``required`` level; None when they are in two domains or more of it."""
        level = level_name(request.record, "required")
        if level is None:
            return request
        values = set()
        for pod in bound:
            node = self._mirror.node(
                pod.spec.node_name
                or self._mirror.node_of(pod_key(pod.metadata.namespace, pod.metadata.name))
                or ""
            )
            values.add(None if node is None else node["labels"].get(level))
        if len(values - {None}) > 1:
            return None  # a node it does not know is no evidence of a split
        if len(values) == 1 and None not in values:
            (value,) = values
            tasks = [
                evolve_task(task, node_selector={**task.node_selector, level: value})
                for task in request.record.tasks
            ]
            return replace(request, record=evolve_gang(request.record, tasks=tasks))
        return request
