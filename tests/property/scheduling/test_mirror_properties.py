"""Property tests of `ClusterMirror`: after any sequence of Node and Pod events and scheduler
decisions, the mirror's Rust state equals one built from scratch out of what is true then.

"What is true" is the last object seen for every node and pod, plus the decisions still
standing: an assumption lives until its pod shows up bound, finishes, is deleted or replaced by
another pod of that name, or until it is forgotten or expires. The rebuild is a fresh placer
`Cluster` given every node with its summed usage; both engines (Rust and the pure-Python
reference) are checked, and both must place a probe gang alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import factories
from crdkit.placer import Cluster, ReferenceCluster
from crdkit.resources import Node, Pod
from crdkit.scheduling.mirror import ClusterMirror, pod_holds_capacity, pod_key
from crdkit.scheduling.nodes import node_entry
from crdkit.scheduling.requests import pod_requests

LEVELS = ["example.com/rack"]
NODES = st.sampled_from(["n0", "n1", "n2", "n3"])
PODS = st.sampled_from(["p0", "p1", "p2", "p3", "p4", "p5"])
PHASES = st.sampled_from([None, "Pending", "Running", "Succeeded", "Failed"])
CPU = st.sampled_from(["0", "100m", "1", "2500m", "4"])
GPU = st.sampled_from([0, 1, 8])
PROBE = factories.gang(
    factories.task("t", 3, requests={"cpu": "1", "nvidia.com/gpu": 1}), name="probe"
)


def make_node(name: str, rack: str, cpu: int, gpu: int, ready: bool, cordoned: bool) -> Node:
    return factories.node(
        name,
        rack=None,
        labels={"example.com/rack": rack},
        cpu=cpu,
        gpus=gpu,
        pods=16,
        ready=ready,
        unschedulable=cordoned,
    )


def make_pod(name: str, uid: str, node: str | None, phase: str | None, cpu: str, gpu: int) -> Pod:
    return factories.pod(
        name,
        namespace="ns",
        uid=uid,
        node=node,
        container="main",
        requests={"cpu": cpu},
        gpus=gpu or None,
        status={"phase": phase},
    )


@dataclass
class Assumption:
    node: str
    milli: dict[str, int]
    uid: str
    deadline: float | None = None


class MirrorMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self.mirrors = [
            ClusterMirror(LEVELS, assume_ttl=10.0, clock=lambda: self.now),
            ClusterMirror(
                LEVELS, assume_ttl=10.0, clock=lambda: self.now, cluster_type=ReferenceCluster
            ),
        ]
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, Pod] = {}
        self.assumed: dict[str, Assumption] = {}
        self.uids = 0

    def _each(self, method: str, *args: Any, **kwargs: Any) -> None:
        for mirror in self.mirrors:
            getattr(mirror, method)(*args, **kwargs)

    # -- the world ---------------------------------------------------------------------------

    @rule(
        name=NODES,
        rack=st.sampled_from(["r0", "r1"]),
        cpu=st.integers(0, 8),
        gpu=GPU,
        ready=st.booleans(),
        cordoned=st.booleans(),
    )
    def node_event(
        self, name: str, rack: str, cpu: int, gpu: int, ready: bool, cordoned: bool
    ) -> None:
        node = make_node(name, rack, cpu, gpu, ready, cordoned)
        self.nodes[name] = node
        self._each("set_node", node)

    @rule(name=NODES)
    def node_deleted(self, name: str) -> None:
        node = self.nodes.pop(name, None)
        if node is not None:
            self._each("remove_node", node)

    @rule(
        name=PODS,
        node=st.one_of(st.none(), NODES),
        phase=PHASES,
        cpu=CPU,
        gpu=GPU,
        new_uid=st.booleans(),
    )
    def pod_event(
        self, name: str, node: str | None, phase: str | None, cpu: str, gpu: int, new_uid: bool
    ) -> None:
        key = pod_key("ns", name)
        old = self.pods.get(key)
        if old is None or new_uid:
            self.uids += 1
            uid = f"u{self.uids}"
        else:
            uid = old.metadata.uid or ""
        pod = make_pod(name, uid, node, phase, cpu, gpu)
        self.pods[key] = pod
        assumption = self.assumed.get(key)
        if assumption is not None and (
            pod_holds_capacity(pod) or phase in ("Succeeded", "Failed") or assumption.uid != uid
        ):
            del self.assumed[key]
        self._each("set_pod", pod)

    @rule(name=PODS)
    def pod_deleted(self, name: str) -> None:
        key = pod_key("ns", name)
        pod = self.pods.pop(key, None)
        self.assumed.pop(key, None)
        if pod is not None:
            self._each("remove_pod", pod)

    # -- decisions ---------------------------------------------------------------------------

    @precondition(lambda self: bool(self.nodes))
    @rule(name=PODS, data=st.data(), cpu=CPU, gpu=GPU)
    def assume(self, name: str, data: st.DataObject, cpu: str, gpu: int) -> None:
        key = pod_key("ns", name)
        pod = self.pods.get(key)
        if pod is None or pod_holds_capacity(pod):
            return  # a scheduler assumes only pods it sees pending
        node = data.draw(st.sampled_from(sorted(self.nodes)))
        milli = pod_requests(make_pod(name, "", node, None, cpu, gpu))
        self.assumed[key] = Assumption(node, milli, pod.metadata.uid or "")
        self._each("assume_pod", key, node, milli, uid=pod.metadata.uid)

    @rule(name=PODS)
    def bind_sent(self, name: str) -> None:
        key = pod_key("ns", name)
        assumption = self.assumed.get(key)
        if assumption is not None and assumption.deadline is None:
            assumption.deadline = self.now + 10.0
        self._each("binding_finished", key)

    @rule(name=PODS)
    def bind_failed(self, name: str) -> None:
        key = pod_key("ns", name)
        self.assumed.pop(key, None)
        self._each("forget_pod", key)

    @rule(seconds=st.sampled_from([1.0, 5.0, 10.0]))
    def time_passes(self, seconds: float) -> None:
        self.now += seconds
        for key, assumption in list(self.assumed.items()):
            if assumption.deadline is not None and assumption.deadline <= self.now:
                del self.assumed[key]
        self._each("expire_assumed")

    # -- the property ------------------------------------------------------------------------

    def _rebuilt(self, cluster_type: type[Cluster]) -> Cluster:
        used: dict[str, dict[str, int]] = {name: {} for name in self.nodes}
        holders: list[tuple[str, dict[str, int]]] = [
            (pod.spec.node_name or "", pod_requests(pod))
            for key, pod in self.pods.items()
            if pod_holds_capacity(pod) and key not in self.assumed
        ]
        holders += [(a.node, a.milli) for a in self.assumed.values()]
        for node, milli in holders:
            if node in used:
                for resource, amount in [*milli.items(), ("pods", 1000)]:
                    used[node][resource] = used[node].get(resource, 0) + amount
        entries = []
        for name, node in sorted(self.nodes.items()):
            entry = node_entry(node)
            entry["used"] = {r: f"{m}m" for r, m in used[name].items() if m}
            entries.append(entry)
        return cluster_type(LEVELS, entries)

    @invariant()
    def mirror_equals_a_rebuild(self) -> None:
        for mirror, cluster_type in zip(self.mirrors, (Cluster, ReferenceCluster), strict=True):
            rebuilt = self._rebuilt(cluster_type)
            assert mirror.cluster.used() == rebuilt.used()
            assert mirror.node_names() == sorted(self.nodes)
            assert mirror.place(PROBE) == rebuilt.place(PROBE)
        for key in self.assumed:
            assert all(m.is_assumed(key) for m in self.mirrors)


TestMirror = MirrorMachine.TestCase
