"""`gang_views`: the rows of the scheduler's view, from a pod store in memory: waiting gangs in
the scheduler's line order (whatever their names), then running ones; a gang that never fits
has no place, start or held nodes."""

from __future__ import annotations

import factories
from crdkit.resources import Pod
from crdkit.runtime.store import Store
from crdkit.scheduling import ClusterMirror, GroupRef
from crdkit.scheduling.groups import pod_group_of
from crdkit.scheduling.outlook import Outlook
from crdkit.scheduling.pending import GROUP_INDEX
from crdkit.scheduling.reporting import Reporter
from crdkit.scheduling.view.gangs import GangSources, gang_views

LEAF = "example.com/leaf"


def gang_of(pod: Pod) -> list[str]:
    found = pod_group_of(pod)
    assert found is not None
    return [str(GroupRef(found[0], pod.metadata.namespace or "default", found[1]))]


def ref(name: str) -> GroupRef:
    return GroupRef("coscheduling", "ml", name)


def rows(line: list[str], never: frozenset[str] = frozenset()) -> list[tuple[str, str, int | None]]:
    mirror = ClusterMirror([LEAF], clock=lambda: 0.0)
    mirror.set_node(factories.node("n0", rack=None, labels={LEAF: "l0"}))
    pods: Store[Pod] = Store({GROUP_INDEX: gang_of})
    for name in ("zeta", "alpha", "mid"):  # waiting: names not in line order
        pods.upsert(factories.pod(f"{name}-0", gpus=8, pod_group=("coscheduling", name)))
    running = factories.pod("run-0", gpus=8, pod_group=("coscheduling", "run"), node="n0")
    pods.upsert(running)
    mirror.set_pod(running)
    reporter = Reporter(mirror, lambda: 0.0, (0.0, 0.0), 10.0)
    reporter.never_fits.update(ref(name) for name in never)
    sources = GangSources(
        pods=pods,
        read=pods.get,
        requests=mirror.requests,
        node_of=mirror.node_of,
        line=lambda: [(str(ref(name)), 0) for name in line],
        reporter=reporter,
        outlook=Outlook(mirror, "best-fit", acting=False),
        reservations={},
        gate=None,
    )
    return [
        (r["gang"], r["state"], r["position"]) for r in gang_views(sources, "nvidia.com/gpu", 0.0)
    ]


def test_waiting_gangs_come_in_line_order_then_running_ones() -> None:
    assert rows(["zeta", "alpha", "mid"]) == [
        ("ml/zeta", "waiting", 1),
        ("ml/alpha", "waiting", 2),
        ("ml/mid", "waiting", 3),
        ("ml/run", "running", None),
    ]


def test_a_gang_that_never_fits_has_no_place_and_the_others_close_up() -> None:
    assert rows(["zeta", "alpha", "mid"], never=frozenset({"alpha"})) == [
        ("ml/zeta", "waiting", 1),
        ("ml/alpha", "waiting", None),
        ("ml/mid", "waiting", 2),
        ("ml/run", "running", None),
    ]
