"""Contract validation: every bad input the contract lists is a ValueError naming the field."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

import factories
from crdkit.placer import Cluster, Gang, Placement, ReferenceCluster
from crdkit.placer.models import effective_levels, load_document

LEVELS = ["example.com/block", "example.com/rack"]


node = partial(factories.placer_node, labels={"example.com/block": "b1", "example.com/rack": "r1"})


def gang(**task: Any) -> dict[str, Any]:
    return factories.gang(
        {"name": "master", "replicas": 1},
        factories.task(**{"name": "worker", "replicas": 4, **task}),
    )


@pytest.fixture(params=[Cluster, ReferenceCluster], ids=["rust", "reference"])
def cluster(request: pytest.FixtureRequest) -> Cluster:
    cls: type[Cluster] = request.param
    return cls(LEVELS, [node("n1"), node("n2")])


@pytest.mark.parametrize(
    ("task", "message"),
    [
        (
            {"requests": {"cpu": "abc"}},
            'gang.tasks[1].requests.cpu: invalid quantity "abc": not a Kubernetes quantity',
        ),
        (
            {"requests": {"cpu": "-1"}},
            'gang.tasks[1].requests.cpu: invalid quantity "-1": must not be negative',
        ),
        ({"minAvailable": 5}, "gang.tasks[1].minAvailable: 5 is more than replicas (4)"),
        (
            {"slice": {"level": "example.com/rack", "size": 3}},
            "gang.tasks[1].slice.size: 3 does not divide replicas (4)",
        ),
        (
            {"minAvailable": 2, "slice": {"level": "example.com/rack", "size": 4}},
            "gang.tasks[1].slice.size: 4 does not divide minAvailable (2)",
        ),
        (
            {
                "topology": {"mode": "required", "level": "example.com/rack"},
                "slice": {"level": "example.com/block", "size": 2},
            },
            'gang.tasks[1].slice.level: "example.com/block" is wider than the required level '
            '"example.com/rack"',
        ),
        (
            {"topology": {"mode": "required", "level": "example.com/zone"}},
            'gang.tasks[1].topology.level: unknown level "example.com/zone" (levels: '
            "example.com/block, example.com/rack, kubernetes.io/hostname)",
        ),
        ({"replicas": 0}, "gang.tasks[1].replicas: Input should be greater than or equal to 1"),
        ({"minavailable": 1}, "gang.tasks[1].minavailable: Extra inputs are not permitted"),
        (
            {"topology": {"mode": "required"}},
            "gang.tasks[1].topology: Value error, mode required needs a level",
        ),
        ({"name": "master"}, 'gang.tasks[1].name: duplicate task name "master"'),
    ],
)
def test_bad_gangs_name_the_field(cluster: Cluster, task: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=r".") as err:
        cluster.place(gang(**task))
    assert str(err.value) == message


def test_gang_level_required_also_bounds_slices(cluster: Cluster) -> None:
    bad = gang(slice={"level": "example.com/block", "size": 2})
    bad["topology"] = {"mode": "required", "level": "example.com/rack"}
    with pytest.raises(ValueError, match=r"^gang\.tasks\[1\]\.slice\.level: "):
        cluster.place(bad)


@pytest.mark.parametrize("cls", [Cluster, ReferenceCluster])
@pytest.mark.parametrize(
    ("snapshot", "message"),
    [
        (
            {"levels": LEVELS, "nodes": [node("n1"), node("n1")]},
            'cluster.nodes[1].name: duplicate node name "n1"',
        ),
        (
            {"levels": LEVELS, "nodes": [node("n1", used={"cpu": "-2"})]},
            'cluster.nodes[0].used.cpu: invalid quantity "-2": must not be negative',
        ),
        (
            {"levels": LEVELS, "nodes": [node("n1", allocatable={"memory": "12Q"})]},
            'cluster.nodes[0].allocatable.memory: invalid quantity "12Q": not a Kubernetes '
            "quantity",
        ),
        (
            {"levels": [*LEVELS, "example.com/rack"], "nodes": []},
            'cluster.levels[2]: duplicate level "example.com/rack"',
        ),
        (
            {"levels": LEVELS, "nodes": [{"name": "n", "taints": [{"key": "k", "effect": "X"}]}]},
            "cluster.nodes[0].taints[0].effect: Input should be 'NoSchedule', 'PreferNoSchedule'"
            " or 'NoExecute'",
        ),
        (
            {"levels": LEVELS, "nodes": [node("n1", allocatable={"cpu": True})]},
            "cluster.nodes[0].allocatable.cpu: Input should be a valid string",
        ),
    ],
)
def test_bad_snapshots_name_the_field(
    cls: type[Cluster], snapshot: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=r".") as err:
        cls.from_snapshot(snapshot)
    assert str(err.value) == message


def test_batches_name_the_gang_by_index(cluster: Cluster) -> None:
    with pytest.raises(ValueError, match=r"^gangs\[1\]\.tasks\[1\]\.requests\.cpu: "):
        cluster.place_all([gang(), gang(requests={"cpu": "x"})])


def test_models_accept_camel_case_and_python_names() -> None:
    by_alias = Gang.model_validate(
        {"name": "g", "tasks": [{"name": "t", "replicas": 2, "minAvailable": 1}]}
    )
    assert by_alias.tasks[0].min_available == 1
    assert by_alias.topology.mode == "unconstrained"


def test_effective_levels_append_the_node_level_once() -> None:
    assert effective_levels(LEVELS)[-1] == "kubernetes.io/hostname"
    assert effective_levels(["kubernetes.io/hostname"]) == ["kubernetes.io/hostname"]
    assert effective_levels([]) == ["kubernetes.io/hostname"]


def test_documents_load_from_json_and_yaml(tmp_path: Any) -> None:
    (tmp_path / "a.json").write_text('{"levels": []}')
    (tmp_path / "a.yaml").write_text("levels:\n  - example.com/rack\n")
    assert load_document(tmp_path / "a.json") == {"levels": []}
    assert load_document(tmp_path / "a.yaml") == {"levels": ["example.com/rack"]}


def test_yaml_nesting_is_bounded_and_named(tmp_path: Any) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("levels: " + "[" * 64 + "]" * 64)  # 65 levels with the top mapping
    with pytest.raises(ValueError, match=r"deep\.yaml: levels(\[0\])+\.\.\.: nested more than 64"):
        load_document(deep)
    deep.write_text("levels: " + "[" * 63 + "]" * 63)
    assert load_document(deep) is not None


def test_yaml_aliases_are_walked_once_per_level(tmp_path: Any) -> None:
    # A "billion laughs" document: 9**9 leaves as a tree, ten small lists as YAML builds it.
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, 10):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    (tmp_path / "laughs.yaml").write_text("\n".join(lines))
    document = load_document(tmp_path / "laughs.yaml")
    assert len(document["a9"]) == 9


def test_placement_round_trips_through_its_contract_form(cluster: Cluster) -> None:
    placement = cluster.place(gang())
    data = placement.to_dict()
    assert Placement.model_validate(data).to_dict() == data
    assert "reason" not in data
    assert data["level"] is not None


def test_requests_given_in_milli_units_are_taken_for_the_strings(cluster: Cluster) -> None:
    # A scheduler read the pods' requests in milli-units already: the record is the one the
    # strings compile to, and a value that differs from the strings shows which one was read.
    text = gang(requests={"nvidia.com/gpu": 1, "cpu": "1500m"})
    parsed = cluster.compile(text)
    given = cluster.compile(text, milli={"worker": {"nvidia.com/gpu": 1000, "cpu": 1500}})
    assert given == parsed
    assert given.tasks[1].requests == {"nvidia.com/gpu": 1000, "cpu": 1500}
    read = cluster.compile(text, milli={"worker": {"nvidia.com/gpu": 2000, "cpu": 1500}})
    assert read.tasks[1].requests["nvidia.com/gpu"] == 2000
    assert read.tasks[0].requests == parsed.tasks[0].requests  # master: parsed as before


@pytest.mark.parametrize(
    ("milli", "message"),
    [
        ({"chief": {}}, 'gang: milli-unit requests given for unknown task "chief"'),
        (
            {"worker": {"cpu": 1000}},
            "gang.tasks[1].requests: the milli-unit requests name ['cpu'], the task "
            "['nvidia.com/gpu']",
        ),
        (
            {"worker": {"nvidia.com/gpu": -1}},
            "gang.tasks[1].requests.nvidia.com/gpu: expected a non-negative integer of "
            "milli-units, got -1",
        ),
        (
            {"worker": {"nvidia.com/gpu": True}},
            "gang.tasks[1].requests.nvidia.com/gpu: expected a non-negative integer of "
            "milli-units, got True",
        ),
        (
            {"worker": {"nvidia.com/gpu": "1"}},
            "gang.tasks[1].requests.nvidia.com/gpu: expected a non-negative integer of "
            "milli-units, got '1'",
        ),
    ],
)
def test_bad_milli_unit_requests_name_the_field(cluster: Cluster, milli: Any, message: str) -> None:
    with pytest.raises(ValueError, match=r"^gang") as caught:
        cluster.compile(gang(), milli=milli)
    assert str(caught.value) == message


def test_a_compiled_node_is_taken_as_it_is_by_any_cluster(cluster: Cluster) -> None:
    record = cluster.compile_node(node("n3"))
    assert cluster.compile_node(record) is record
    other = Cluster(LEVELS)
    other.add_nodes([record, node("n4")])
    cluster.add_node(record)
    assert len(other) == 2
    assert len(cluster) == 3
    placed = other.place(gang(replicas=16))
    assert {a.node for a in placed.assignments} == {"n3", "n4"}
    with pytest.raises(ValueError, match=r"^nodes\[1\]\.allocatable\.cpu: invalid quantity"):
        other.add_nodes([node("n5"), node("n6", allocatable={"cpu": "x"})])
    assert len(other) == 2  # nothing of a refused batch was added
    with pytest.raises(ValueError, match=r"^node\.name"):
        cluster.compile_node({"labels": {}})
