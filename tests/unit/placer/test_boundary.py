"""The typed Python-Rust boundary: compiled records, one compile per request, batches in Rust."""

from __future__ import annotations

import copy
import pickle
import threading
import time
from typing import Any

import pytest

from crdkit import _placer
from crdkit.placer import Cluster, ReferenceCluster

LEVELS = ["example.com/block", "example.com/rack"]
NODES = [
    {
        "name": f"n{i}",
        "labels": {"example.com/block": "b1", "example.com/rack": f"r{i // 2}"},
        "allocatable": {"cpu": "96", "nvidia.com/gpu": 8, "pods": 110},
        "taints": [{"key": "gpu", "value": "h100", "effect": "NoSchedule"}] if i == 3 else [],
    }
    for i in range(4)
]
GANG: dict[str, Any] = {
    "name": "g",
    "priority": 3,
    "topology": {"mode": "required", "level": "example.com/block"},
    "tasks": [
        {"name": "master", "replicas": 1, "requests": {"cpu": "500m", "nvidia.com/gpu": 1}},
        {
            "name": "worker",
            "replicas": 4,
            "minAvailable": 2,
            "requests": {"nvidia.com/gpu": 2},
            "nodeSelector": {"example.com/rack": "r0"},
            "tolerations": [{"key": "gpu", "operator": "Exists"}],
            "slice": {"level": "kubernetes.io/hostname", "size": 2},
            "topology": {"mode": "preferred", "level": "example.com/rack"},
        },
    ],
}


@pytest.fixture(params=[Cluster, ReferenceCluster], ids=["rust", "reference"])
def cluster(request: pytest.FixtureRequest) -> Cluster:
    cls: type[Cluster] = request.param
    return cls(LEVELS, NODES)


def test_compile_gives_a_frozen_record_with_named_fields(cluster: Cluster) -> None:
    gang = cluster.compile(GANG)
    assert isinstance(gang, _placer.Gang)
    assert (gang.name, gang.priority, gang.levels) == ("g", 3, cluster.levels)
    assert (gang.topology.mode, gang.topology.level) == ("required", 0)
    master, worker = gang.tasks
    assert master.requests == {"cpu": 500, "nvidia.com/gpu": 1000}
    assert (worker.replicas, worker.min_available) == (4, 2)
    assert worker.node_selector == {"example.com/rack": "r0"}
    [toleration] = worker.tolerations
    assert (toleration.key, toleration.operator, toleration.value, toleration.effect) == (
        "gpu",
        "Exists",
        "",
        None,
    )
    assert worker.slice is not None
    assert (worker.slice.level, worker.slice.size) == (2, 2)
    assert worker.topology is not None
    assert (worker.topology.mode, worker.topology.level) == ("preferred", 1)
    with pytest.raises(AttributeError):
        gang.name = "other"  # type: ignore[misc]
    assert cluster.compile(gang) is gang  # compiled once, taken as it is
    assert gang == cluster.compile(GANG)


def test_a_compiled_gang_places_like_its_dict(cluster: Cluster) -> None:
    gang = cluster.compile(GANG)
    placement = cluster.place(gang)
    assert placement.to_dict() == cluster.place(GANG).to_dict()
    assert placement == cluster.place(GANG)
    assert placement.requests == {
        "master": {"cpu": 500, "nvidia.com/gpu": 1000},
        "worker": {"nvidia.com/gpu": 2000},
    }
    copied = copy.deepcopy(placement)
    assert copied == placement
    assert copied.requests == placement.requests
    pickled = pickle.loads(pickle.dumps(placement))
    assert pickled == placement
    assert pickled.requests == placement.requests
    assert pickled._gang is not None
    assert [t.slice and (t.slice.level, t.slice.size) for t in pickled._gang.tasks] == [
        t.slice and (t.slice.level, t.slice.size) for t in gang.tasks
    ]
    assert [p.to_dict() for p in cluster.place_all([gang, GANG])] == [
        p.to_dict() for p in cluster.place_all([GANG, gang])
    ]


def test_records_compare_hash_and_copy_with_changes_by_value(cluster: Cluster) -> None:
    gang = cluster.compile(GANG)
    again = cluster.compile(GANG)
    assert gang == again
    assert hash(gang) == hash(again)
    assert {gang: "seen"}[again] == "seen"
    master, worker = gang.tasks
    assert worker == again.tasks[1]
    assert hash(worker) == hash(again.tasks[1])
    assert worker.topology == _placer.Topology("preferred", 1)
    assert worker.slice == _placer.Slice(2, 2)
    assert worker.tolerations == [_placer.Toleration("gpu", "Exists", "", None)]

    wider = worker.__replace__(replicas=8, min_available=8)
    assert (wider.name, wider.replicas, wider.requests) == ("worker", 8, worker.requests)
    assert wider != worker
    renamed = gang.__replace__(name="other", tasks=[master, wider])
    assert (renamed.name, renamed.priority, renamed.levels) == ("other", 3, gang.levels)
    assert renamed.tasks == [master, wider]
    assert gang.__replace__() == gang
    # A copy goes through the checked constructor, as a new record does.
    with pytest.raises(ValueError, match=r"^Task\.min_available: 2 is not in 1\.\.=1"):
        worker.__replace__(replicas=1)
    with pytest.raises(ValueError, match=r"^Gang\.name: must not be empty$"):
        gang.__replace__(name="")


def test_a_gang_compiled_for_other_levels_is_refused(cluster: Cluster) -> None:
    other = type(cluster)(["example.com/rack"], [])
    gang = other.compile({"name": "g", "tasks": [{"name": "w", "replicas": 1}]})
    message = (
        r"^gang: compiled for the levels \[example\.com/rack, kubernetes\.io/hostname\], not "
        r"this cluster's \[example\.com/block, example\.com/rack, kubernetes\.io/hostname\]$"
    )
    with pytest.raises(ValueError, match=message):
        cluster.place(gang)
    with pytest.raises(ValueError, match=message):
        cluster.place_all([gang])


def test_outcome_record_names_tasks_and_levels() -> None:
    engine = _placer.Engine([*LEVELS, "kubernetes.io/hostname"], False)
    engine.add_node(
        _placer.Node(
            "n0",
            labels={
                "example.com/block": "b1",
                "example.com/rack": "r0",
                "kubernetes.io/hostname": "n0",
            },
            allocatable={"nvidia.com/gpu": 8000},
            used={},
            taints=[],
            unschedulable=False,
            ready=True,
        )
    )
    task = _placer.Task(
        "w",
        replicas=3,
        min_available=3,
        requests={"nvidia.com/gpu": 2000},
        node_selector={},
        tolerations=[],
        slice=None,
        topology=None,
    )
    gang = _placer.Gang(
        "g",
        priority=0,
        topology=_placer.Topology("unconstrained", None),
        tasks=[task],
        levels=engine.levels,
    )
    outcome = engine.place(gang)
    assert (outcome.gang, outcome.status) == ("g", "placed")
    assert outcome.level == "kubernetes.io/hostname"
    assert outcome.request is gang
    assert outcome.domain == {
        "example.com/block": "b1",
        "example.com/rack": "r0",
        "kubernetes.io/hostname": "n0",
    }
    assert outcome.placed == {"w": 3}
    assert [(a.task, a.node, a.count) for a in outcome.assignments] == [("w", "n0", 3)]
    assert outcome.reason is None
    assert outcome.fit is None
    engine.assume(gang, outcome.assignments)
    assert engine.used() == {"n0": {"nvidia.com/gpu": 6000, "pods": 3000}}
    failed = engine.place(gang)
    assert failed.status == "unschedulable"
    assert failed.placed == {"w": 0}
    assert failed.fit is not None
    assert (failed.fit.best_domain, failed.fit.fits, failed.fit.wants, failed.fit.unit) == (
        None,
        1,
        3,
        "pods",
    )
    engine.release(gang, outcome.assignments)
    assert engine.used() == {"n0": {}}


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: _placer.Taint("k", "v", "Sometimes"), "unknown taint effect"),
        (lambda: _placer.Topology("required", None), "needs a level"),
        (lambda: _placer.Topology("unconstrained", 1), "takes no level"),
        (lambda: _placer.Slice(0, 0), "at least 1"),
        (lambda: _placer.Toleration("k", "Like", "", None), "unknown toleration operator"),
        (lambda: _placer.Assignment("w", "n", 0), "at least 1"),
        (lambda: _placer.Fit(None, 1, 2, "gpus"), "not pods or slices"),
        (
            lambda: _placer.Task(
                "w",
                replicas=2,
                min_available=3,
                requests={},
                node_selector={},
                tolerations=[],
                slice=None,
                topology=None,
            ),
            "is not in 1..=2",
        ),
        (
            lambda: _placer.Task(
                "w",
                replicas=1,
                min_available=1,
                requests={"cpu": -1},
                node_selector={},
                tolerations=[],
                slice=None,
                topology=None,
            ),
            "negative",
        ),
        (
            lambda: _placer.Gang(
                "g",
                priority=0,
                topology=_placer.Topology("required", 5),
                tasks=[],
                levels=["kubernetes.io/hostname"],
            ),
            "at least one task",
        ),
    ],
)
def test_records_refuse_what_the_core_cannot_use(build: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()


def test_place_all_is_one_engine_call() -> None:
    cluster = Cluster(LEVELS, NODES)
    engine = cluster._engine
    calls: list[str] = []

    class Spy:
        def __getattr__(self, name: str) -> Any:
            calls.append(name)
            return getattr(engine, name)

    cluster._engine = Spy()  # type: ignore[assignment]
    results = cluster.place_all([GANG, {**GANG, "name": "h", "priority": 9}])
    assert calls == ["place_all"]
    assert [p.gang for p in results] == ["h", "g"]


def test_priorities_beyond_64_bits_name_the_field(cluster: Cluster) -> None:
    with pytest.raises(ValueError, match=r"^gangs\[0\]\.priority: .* out of the 64-bit range$"):
        cluster.place_all([{**GANG, "priority": 2**63}])


def test_place_all_releases_the_gil_for_the_whole_batch() -> None:
    nodes = [
        {
            "name": f"n{i:04d}",
            "labels": {"example.com/block": f"b{i // 64}", "example.com/rack": f"r{i // 8}"},
            "allocatable": {"nvidia.com/gpu": 8, "pods": 110},
        }
        for i in range(2048)
    ]
    cluster = Cluster(LEVELS, nodes)
    batch = [
        cluster.compile({"name": f"g{i}", "tasks": [{"name": "w", "replicas": 64}]})
        for i in range(200)
    ]
    progress = [0]
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            progress[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        time.sleep(0.01)
        start = progress[0]
        outcomes = cluster._engine.place_all(batch)  # the Rust call alone, no Python around it
        during = progress[0] - start
    finally:
        stop.set()
        counter.join()
    assert [o.status for o in outcomes] == ["placed"] * 200
    # Had the batch held the GIL, the counter would have stood still while it ran.
    assert during > 1000, during
    assert cluster.place_all(batch)[0].to_dict() == cluster.place(batch[0]).to_dict()
