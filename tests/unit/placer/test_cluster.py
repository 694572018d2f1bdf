"""`Cluster`: the contract's features end to end, on both engines, and the API around them."""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any

import pytest

import factories
from crdkit import _placer
from crdkit.placer import Cluster, Policy, ReferenceCluster
from factories import gang, task

LEVELS = ["example.com/block", "example.com/rack"]


def node(name: str, block: str, rack: str, gpus: int = 8, used: int = 0, **extra: Any) -> dict:
    labels = {"example.com/block": block, "example.com/rack": rack}
    made = factories.placer_node(
        name, labels, memory="1536Gi", gpus=gpus, used={"nvidia.com/gpu": used}
    )
    return made | extra


RACKS = [
    node("a1", "b1", "r1"),
    node("a2", "b1", "r1", used=4),
    node("b1", "b1", "r2", used=6),
    node("b2", "b1", "r2", used=6),
    node("c1", "b2", "r3"),
    node("c2", "b2", "r3"),
]


@pytest.fixture(params=[Cluster, ReferenceCluster], ids=["rust", "reference"])
def engine(request: pytest.FixtureRequest) -> type[Cluster]:
    cls: type[Cluster] = request.param
    return cls


def nodes_of(placement: Any) -> list[tuple[str, str, int]]:
    return [(a.task, a.node, a.count) for a in placement.assignments]


def test_result_is_the_contract_object(engine: type[Cluster]) -> None:
    cluster = engine(LEVELS, RACKS)
    placement = cluster.place(
        gang(
            task("master", 1, 4),
            task("worker", 2, 8, slice={"level": "kubernetes.io/hostname", "size": 1}),
            topology={"mode": "required", "level": "example.com/rack"},
        )
    )
    # Each task alone fits rack r3 (two free 8-GPU nodes), but not both together.
    assert placement.to_dict() == {
        "gang": "g",
        "status": "unschedulable",
        "level": None,
        "domain": {},
        "placed": {"master": 0, "worker": 0},
        "assignments": [],
        "reason": (
            "required example.com/rack: no rack holds 1 master pod and 2 worker pods together"
        ),
    }
    # Unconstrained, the tasks are tried together in r3 first (the master, placed first, takes
    # c1 and leaves one free node), then each on its own: the master on the fullest node that
    # holds it (b1, 2 GPUs free), the workers on the two free nodes of r3.
    placement = cluster.place(gang(task("master", 1, 2), task("worker", 2, 8)))
    assert placement.to_dict() == {
        "gang": "g",
        "status": "placed",
        "level": None,
        "domain": {},
        "placed": {"master": 1, "worker": 2},
        "assignments": [
            {"task": "master", "node": "b1", "count": 1},
            {"task": "worker", "node": "c1", "count": 1},
            {"task": "worker", "node": "c2", "count": 1},
        ],
    }


def test_required_picks_the_lowest_level_then_best_fit(engine: type[Cluster]) -> None:
    cluster = engine(LEVELS, RACKS)
    # 4 GPUs fit on one node: the fullest node that holds them (b1 and b2 have 2, a2 has 4).
    placement = cluster.place(
        gang(task("w", 4), topology={"mode": "required", "level": "example.com/rack"})
    )
    assert placement.level == "kubernetes.io/hostname"
    assert nodes_of(placement) == [("w", "a2", 4)]
    # 12 GPUs: racks r1 (12 free) and r3 (16 free) hold them; r1 is the best fit.
    placement = cluster.place(
        gang(task("w", 12), topology={"mode": "required", "level": "example.com/rack"})
    )
    assert placement.domain == {"example.com/block": "b1", "example.com/rack": "r1"}
    assert nodes_of(placement) == [("w", "a1", 8), ("w", "a2", 4)]


def test_required_failure_reason_and_fit(engine: type[Cluster]) -> None:
    cluster = engine(LEVELS, RACKS)
    placement = cluster.place(
        gang(task("worker", 20), topology={"mode": "required", "level": "example.com/rack"})
    )
    assert placement.status == "unschedulable"
    assert placement.placed == {"worker": 0}
    assert placement.assignments == []
    assert (
        placement.reason
        == "required example.com/rack: the best rack fits 16 of 20 worker pods (r3)"
    )
    assert placement.to_dict()["fit"] == {
        "bestDomain": "r3",
        "fits": 16,
        "wants": 20,
        "unit": "pods",
    }


def test_preferred_and_unconstrained_spread_when_needed(engine: type[Cluster]) -> None:
    cluster = engine(LEVELS, RACKS)
    for mode in ({"mode": "preferred", "level": "example.com/rack"}, {"mode": "unconstrained"}):
        placement = cluster.place(gang(task("w", 30), topology=mode))
        assert placement.status == "placed"
        assert placement.level is None
        assert placement.domain == {}
        assert sum(a.count for a in placement.assignments) == 30
    placement = cluster.place(gang(task("w", 40)))
    assert placement.reason == "unconstrained: the cluster fits 32 of 40 w pods"


def test_min_available_second_attempt(engine: type[Cluster]) -> None:
    cluster = engine(LEVELS, RACKS)
    placement = cluster.place(
        gang(
            task("w", 20, minAvailable=16),
            topology={"mode": "required", "level": "example.com/rack"},
        )
    )
    assert placement.status == "minimal"
    assert placement.placed == {"w": 16}


def test_filters_selector_taints_cordon_readiness(engine: type[Cluster]) -> None:
    cluster = engine(
        LEVELS,
        [
            node(
                "sel",
                "b1",
                "r1",
                labels={"example.com/block": "b1", "example.com/rack": "r1", "nic": "mlx5"},
            ),
            node(
                "taint",
                "b1",
                "r1",
                taints=[{"key": "gpu", "value": "h100", "effect": "NoSchedule"}],
            ),
            node("cordon", "b1", "r1", unschedulable=True),
            node("down", "b1", "r1", ready=False),
        ],
    )
    assert nodes_of(cluster.place(gang(task("w", 1, nodeSelector={"nic": "mlx5"})))) == [
        ("w", "sel", 1)
    ]
    tolerant = task("w", 16, tolerations=[{"key": "gpu", "operator": "Exists"}])
    assert nodes_of(cluster.place(gang(tolerant))) == [("w", "sel", 8), ("w", "taint", 8)]
    assert cluster.place(gang(task("w", 9))).status == "unschedulable"


def test_nodes_missing_level_labels_take_only_unconstrained_pods(engine: type[Cluster]) -> None:
    loose = {"name": "loose", "labels": {}, "allocatable": {"nvidia.com/gpu": 8}}
    cluster = engine(LEVELS, [loose])
    assert nodes_of(cluster.place(gang(task("w", 2)))) == [("w", "loose", 2)]
    assert cluster.place(gang(task("w", 2))).level is None
    required = gang(task("w", 2), topology={"mode": "required", "level": "example.com/rack"})
    placement = cluster.place(required)
    assert placement.reason == (
        "required example.com/rack: the best rack fits 0 of 2 w pods (no rack in the cluster)"
    )
    sliced = gang(task("w", 2, slice={"level": "kubernetes.io/hostname", "size": 2}))
    assert cluster.place(sliced).status == "unschedulable"


def test_pods_resource_and_missing_resources(engine: type[Cluster]) -> None:
    small = {
        "name": "n",
        "labels": {"example.com/block": "b", "example.com/rack": "r"},
        "allocatable": {"cpu": "4", "pods": 2},
        "used": {"pods": 1},
    }
    cluster = engine(LEVELS, [small])
    assert cluster.place(gang(task("w", 1, 0))).status == "placed"
    assert (
        cluster.place(gang(task("w", 2, 0))).reason
        == "unconstrained: the cluster fits 1 of 2 w pods"
    )
    # No GPU in allocatable: a GPU request does not fit, a zero request does.
    assert cluster.place(gang(task("w", 1, 1))).status == "unschedulable"


def test_slices_are_counted_in_slices(engine: type[Cluster]) -> None:
    cluster = engine(LEVELS, RACKS)
    sliced = task("w", 12, 2, slice={"level": "example.com/rack", "size": 4})
    placement = cluster.place(
        gang(sliced, topology={"mode": "required", "level": "example.com/block"})
    )
    assert placement.status == "unschedulable"
    assert placement.to_dict()["fit"]["unit"] == "slices"


def test_heterogeneous_gang_is_searched_as_a_whole(engine: type[Cluster]) -> None:
    # 6, 8 and 4 GPUs free under one leaf. Placing the launcher first where it fits best
    # (c1, 4 free) leaves room for 3 workers; searching both tasks together places them all.
    leaf = [node("a1", "b1", "r1", used=2), node("b1", "b1", "r1"), node("c1", "b1", "r1", used=4)]
    placement = engine(LEVELS, leaf).place(
        gang(
            task("launcher", 1, 2),
            task("worker", 4, 4),
            topology={"mode": "required", "level": "example.com/rack"},
        )
    )
    assert placement.status == "placed", placement.reason
    assert placement.level == "example.com/rack"
    assert nodes_of(placement) == [
        ("launcher", "a1", 1),
        ("worker", "a1", 1),
        ("worker", "b1", 2),
        ("worker", "c1", 1),
    ]


def test_task_level_topology_is_nested_in_the_gang_domain(engine: type[Cluster]) -> None:
    # Alone, the master's best rack is r3 (block b2), which cannot also take the workers; the
    # gang is required at the block, so the master and the workers share block b1.
    cluster = engine(
        LEVELS,
        [
            node("a1", "b1", "r1"),
            node("a2", "b1", "r1"),
            node("b1", "b1", "r2"),
            node("b2", "b1", "r2"),
            node("c1", "b2", "r3"),
        ],
    )
    rack = {"mode": "required", "level": "example.com/rack"}
    placement = cluster.place(
        gang(
            task("master", 1, 8, topology=rack),
            task("worker", 2, 8, topology=rack),
            topology={"mode": "required", "level": "example.com/block"},
        )
    )
    assert placement.status == "placed", placement.reason
    assert placement.domain == {"example.com/block": "b1"}
    assert [a.node for a in placement.assignments] == ["a1", "b1", "b2"]


def distinct_nodes(count: int) -> list[dict[str, Any]]:
    """``count`` 4-GPU nodes that differ in a resource nobody asks for: none is a twin of
    another, so the search cannot skip any of them."""
    nodes = []
    for i in range(count):
        spare = node(f"n{i:02d}", "b1", "r1", gpus=4)
        spare["allocatable"]["example.com/disk"] = i + 1
        nodes.append(spare)
    return nodes


def small_and_large(small: int, large: int) -> dict[str, Any]:
    """A gang of ``small`` 2-GPU and ``large`` 3-GPU pods, all in one rack: on 4-GPU nodes each
    node takes two small pods or one large one."""
    return gang(
        task("small", small, 2),
        task("large", large, 3),
        topology={"mode": "required", "level": "example.com/rack"},
    )


def test_an_exhausted_search_budget_is_its_own_reason() -> None:
    # 2- and 3-GPU pods on 4-GPU nodes: each node takes two small pods or one large one, so
    # 20 small and 21 large need 31 of the 30 nodes. Every bound passes; the nodes differ in a
    # resource nobody asks for, so none is a twin of another, and the spreads of the large pods
    # far outnumber the budget: the answer says so instead of "does not fit".
    placement = Cluster(LEVELS, distinct_nodes(30)).place(small_and_large(20, 21))
    assert placement.status == "unschedulable"
    assert placement.reason is not None
    assert placement.reason.startswith("search budget exhausted")


def test_a_smaller_search_budget_gives_up_sooner_alike_in_both_engines(
    engine: type[Cluster],
) -> None:
    # The gang above on 8 distinct nodes: 4 small and 7 large pods need 9 nodes of the 8. The
    # default budget proves it does not fit; a budget of 50 steps runs out first, and says so.
    nodes = distinct_nodes(8)
    hard = small_and_large(4, 7)
    proved = engine(LEVELS, nodes).place(hard)
    assert proved.status == "unschedulable"
    assert proved.reason == (
        "required example.com/rack: no rack holds 4 small pods and 7 large pods together"
    )
    gave_up = engine(LEVELS, nodes, search_budget=50).place(hard)
    assert gave_up.status == "unschedulable"
    assert gave_up.reason == (
        "search budget exhausted: 50 steps found neither a placement nor a proof that none exists"
    )


@pytest.mark.parametrize("budget", [0, -1, True, 2.5])
def test_a_search_budget_must_be_a_positive_integer(engine: type[Cluster], budget: object) -> None:
    with pytest.raises(ValueError, match="search_budget"):
        engine(LEVELS, [], search_budget=budget)  # type: ignore[arg-type]


def test_interchangeable_nodes_are_searched_once(engine: type[Cluster]) -> None:
    # The same gang on 30 identical nodes: a node gets no more than its twin before it, so the
    # search proves quickly that the gang does not fit.
    nodes = [node(f"n{i:02d}", "b1", "r1", gpus=4) for i in range(30)]
    placement = engine(LEVELS, nodes).place(small_and_large(20, 21))
    assert placement.status == "unschedulable"
    assert (
        placement.reason
        == "required example.com/rack: no rack holds 20 small pods and 21 large pods together"
    )


def test_place_all_orders_by_priority_and_sees_earlier_gangs(engine: type[Cluster]) -> None:
    cluster = engine(LEVELS, RACKS)
    before = cluster.used()
    results = cluster.place_all(
        [gang(task("w", 20), name="low"), gang(task("w", 20), name="high", priority=5)]
    )
    assert [(p.gang, p.status) for p in results] == [("high", "placed"), ("low", "unschedulable")]
    assert cluster.used() == before


def test_assume_and_release_round_trip(engine: type[Cluster]) -> None:
    cluster = engine(LEVELS, RACKS)
    before = cluster.used()
    placement = cluster.place(gang(task("w", 12)))
    cluster.assume(placement)
    assert cluster.place(gang(task("w", 12))).assignments != placement.assignments
    cluster.release(placement)
    assert cluster.used() == before
    with pytest.raises(ValueError, match=r"^placement\.assignments\[0\]: releasing"):
        cluster.release(placement)


def test_assume_from_json_needs_the_gang(engine: type[Cluster]) -> None:
    from crdkit.placer import Placement

    cluster = engine(LEVELS, RACKS)
    the_gang = gang(task("w", 3))
    loaded = Placement.model_validate(cluster.place(the_gang).to_dict())
    with pytest.raises(ValueError, match=r"^placement\.assignments\[0\]\.task: "):
        cluster.assume(loaded)
    cluster.assume(loaded, the_gang)
    assert cluster.used()["a2"]["nvidia.com/gpu"] == 7000


def test_node_add_update_remove(engine: type[Cluster]) -> None:
    cluster = engine(LEVELS, RACKS)
    cluster.add_node(node("d1", "b3", "r9", gpus=16))
    assert cluster.place(gang(task("w", 16))).domain["example.com/block"] == "b3"
    cluster.update_node(node("d1", "b3", "r9", gpus=16, used=16))
    assert cluster.place(gang(task("w", 16))).domain.get("example.com/block") != "b3"
    cluster.remove_node("d1")
    assert "d1" not in cluster.used()
    with pytest.raises(ValueError, match=r'^node\.name: node "a1" already exists'):
        cluster.add_node(node("a1", "b1", "r1"))
    with pytest.raises(ValueError, match=r"^node\.allocatable\.cpu: "):
        cluster.add_node(node("x", "b1", "r1") | {"allocatable": {"cpu": "nope"}})


async def test_place_async_runs_off_the_event_loop_thread() -> None:
    cluster = Cluster(LEVELS, RACKS)
    loop_thread = threading.get_ident()
    seen: list[int] = []
    original = cluster._place_compiled

    def spy(compiled: Any, policy: Any) -> Any:
        seen.append(threading.get_ident())
        return original(compiled, policy)

    cluster._place_compiled = spy  # type: ignore[method-assign]
    placements = await asyncio.gather(*(cluster.place_async(gang(task("w", 2))) for _ in range(4)))
    assert all(p.status == "placed" for p in placements)
    assert seen
    assert all(ident != loop_thread for ident in seen)
    batch = await cluster.place_all_async([gang(task("w", 2))])
    assert batch[0].status == "placed"


def test_rust_panics_arrive_as_runtime_error_with_context() -> None:
    engine = _placer.Engine(["kubernetes.io/hostname"], True)
    with pytest.raises(
        RuntimeError, match=r"internal error in Engine\._panic_for_test: deliberate"
    ):
        engine._panic_for_test()
    assert len(engine) == 0  # the state is still usable afterwards


def test_calls_from_several_threads_are_serialised() -> None:
    cluster = Cluster(LEVELS, RACKS)
    expected = cluster.place(gang(task("w", 12))).to_dict()
    results: list[dict[str, Any]] = []

    def work() -> None:
        for _ in range(20):
            results.append(cluster.place(gang(task("w", 12))).to_dict())

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 80


@pytest.mark.parametrize(
    ("policy", "chosen"),
    # keep-whole: neither node is free, so it ranks by best fit.
    [("best-fit", "x"), ("least-free", "y"), ("binpack", "y"), ("keep-whole", "x")],
)
def test_policies_rank_nodes_differently(
    engine: type[Cluster], policy: Policy, chosen: str
) -> None:
    def cpu_node(name: str, gpus_used: int, cpus_used: int) -> dict[str, Any]:
        return {
            "name": name,
            "labels": {"example.com/block": "b", "example.com/rack": "r"},
            "allocatable": {"cpu": "96", "nvidia.com/gpu": 8},
            "used": {"cpu": str(cpus_used), "nvidia.com/gpu": gpus_used},
        }

    # x holds the fewest such pods (2, GPU-bound); y has the smallest free share of GPU and CPU
    # together (4/8 + 10/96) and the highest utilisation after placing.
    cluster = engine(LEVELS, [cpu_node("x", 6, 6), cpu_node("y", 4, 86)])
    one = gang({"name": "w", "replicas": 1, "requests": {"cpu": "1", "nvidia.com/gpu": 1}})
    assert nodes_of(cluster.place(one, policy)) == [("w", chosen, 1)]


def leaf_node(name: str, leaf: str, gpus_used: int = 0) -> dict[str, Any]:
    """An 8-GPU node in ``leaf`` of spine ``s`` (levels: spine, leaf)."""
    labels = {"example.com/spine": "s", "example.com/leaf": leaf}
    return factories.placer_node(name, labels, pods=None, used={"nvidia.com/gpu": gpus_used})


SPINE_LEAF = ["example.com/spine", "example.com/leaf"]


def test_keep_whole_puts_a_small_job_where_capacity_is_already_broken(
    engine: type[Cluster],
) -> None:
    # Leaf a is wholly free; leaf b has one node in use. Best fit takes leaf a's node (the same
    # capacity, the first path); keep-whole takes b's free node and leaves a whole.
    nodes = [leaf_node("a1", "a"), leaf_node("a2", "a"), leaf_node("b1", "b", 8)]
    nodes.append(leaf_node("b2", "b"))
    cluster = engine(SPINE_LEAF, nodes)
    one = gang({"name": "w", "replicas": 1, "requests": {"nvidia.com/gpu": 8}})
    assert nodes_of(cluster.place(one, "best-fit")) == [("w", "a1", 1)]
    assert nodes_of(cluster.place(one, "keep-whole")) == [("w", "b2", 1)]


def test_keep_whole_prefers_a_partly_used_node_over_breaking_a_free_one(
    engine: type[Cluster],
) -> None:
    # x (4 GPUs in use) takes both 2-GPU pods, so y (none in use) stays whole.
    cluster = engine(SPINE_LEAF, [leaf_node("x", "a", 4), leaf_node("y", "a")])
    two = gang({"name": "w", "replicas": 2, "requests": {"nvidia.com/gpu": 2}})
    assert nodes_of(cluster.place(two, "keep-whole")) == [("w", "x", 2)]


def test_keep_whole_takes_a_whole_leaf_when_a_gang_needs_one(engine: type[Cluster]) -> None:
    nodes = [leaf_node("a1", "a"), leaf_node("a2", "a"), leaf_node("b1", "b", 8)]
    nodes.append(leaf_node("b2", "b"))
    cluster = engine(SPINE_LEAF, nodes)
    two = gang(
        {"name": "w", "replicas": 2, "requests": {"nvidia.com/gpu": 8}},
        topology={"mode": "required", "level": "example.com/leaf"},
    )
    assert sorted(nodes_of(cluster.place(two, "keep-whole"))) == [("w", "a1", 1), ("w", "a2", 1)]


def test_unknown_policy_is_a_value_error(engine: type[Cluster]) -> None:
    with pytest.raises(ValueError, match=r'^policy: unknown policy "tightest"'):
        engine(LEVELS, RACKS).place(gang(task("w", 1)), "tightest")  # type: ignore[arg-type]


def test_release_checks_the_total_over_items_naming_one_node(engine: type[Cluster]) -> None:
    cluster = engine(LEVELS, RACKS)
    placement = cluster.place(gang(task("w", 2)))
    cluster.assume(placement)
    doubled = placement.model_copy(update={"assignments": placement.assignments * 2})
    doubled._requests = placement.requests
    before = cluster.used()
    with pytest.raises(ValueError, match=r"^placement\.assignments\[1\]: releasing it would make"):
        cluster.release(doubled)
    assert cluster.used() == before
    assert len(cluster) == len(RACKS)


def test_one_rank_per_node_for_a_task_and_for_the_whole_gang(engine: type[Cluster]) -> None:
    cluster = engine.from_snapshot({"levels": LEVELS, "nodes": RACKS})
    required = {"mode": "required", "level": "example.com/rack"}
    # Without a limit, 2 one-GPU pods share the fullest node of the best-fitting rack.
    packed = cluster.place(gang(task("w", 2), topology=required))
    assert [(a.node, a.count) for a in packed.assignments] == [("b1", 2)]
    # With one per node, every rack holds just 2 of them: the first rack by name wins the tie.
    ranks = cluster.place(gang(task("w", 2, maxPerNode=1), topology=required))
    assert [(a.node, a.count) for a in ranks.assignments] == [("a1", 1), ("a2", 1)]
    # A task's limit leaves other tasks free; the gang's counts every task together.
    each = cluster.place(gang(task("m", 1, maxPerNode=1), task("w", 1, maxPerNode=1)))
    assert len({a.node for a in each.assignments}) == 1
    together = cluster.place(gang(task("m", 1), task("w", 3), maxPerNode=1))
    assert len({a.node for a in together.assignments}) == 4
    # Nothing of the limit stays behind once the pods are assumed.
    cluster.assume(together)
    assert all(" " not in resource for used in cluster.used().values() for resource in used)


def test_avoided_nodes_take_none_of_the_task(engine: type[Cluster]) -> None:
    cluster = engine.from_snapshot({"levels": LEVELS, "nodes": RACKS})
    placement = cluster.place(gang(task("w", 2, avoidNodes=["b1", "unknown"])))
    assert "b1" not in {a.node for a in placement.assignments}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (gang(task("w", 1, maxPerNode=0)), "gang.tasks[0].maxPerNode: "),
        (gang(task("w", 1), maxPerNode=-1), "gang.maxPerNode: "),
        (gang(task("w", 1, avoidNodes="b1")), "gang.tasks[0].avoidNodes: "),
        (gang(task("w", 1, avoidNodes=[7])), "gang.tasks[0].avoidNodes[0]: "),
    ],
)
def test_bad_limits_and_avoided_nodes_name_their_field(bad: dict[str, Any], message: str) -> None:
    cluster = Cluster.from_snapshot({"levels": LEVELS, "nodes": RACKS})
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        cluster.place(bad)
