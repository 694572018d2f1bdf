"""`crdkit.placer.plain`: which documents it reads itself, and the contract JSON it writes."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from crdkit.placer import Cluster, models, plain
from crdkit.placer.plain import place_plainly, plain_gang, plain_snapshot

CLUSTER: dict[str, Any] = {
    "levels": ["rack"],
    "nodes": [
        {"name": "n1", "labels": {"rack": "r1"}, "allocatable": {"gpu": 8, "cpu": "16"}},
        {"name": "n2", "labels": {"rack": "r1"}, "allocatable": {"gpu": 8, "cpu": "16"}},
    ],
}
GANG: dict[str, Any] = {
    "name": "train",
    "topology": {"mode": "required", "level": "rack"},
    "tasks": [{"name": "worker", "replicas": 2, "requests": {"gpu": 8}, "maxPerNode": 1}],
}


def test_plainly_valid_documents_are_read() -> None:
    snapshot = plain_snapshot(CLUSTER)
    assert snapshot is not None
    assert [node.name for node in snapshot.nodes] == ["n1", "n2"]
    gang = plain_gang(GANG)
    assert gang is not None
    assert gang.tasks[0].max_per_node == 1
    assert gang.topology.level == "rack"


@pytest.mark.parametrize(
    "change",
    [
        {"replicas": "2"},  # a string the models would turn into a number
        {"replicas": True},  # a boolean is not a count here
        {"replicas": 2.0},
        {"min_available": 1},  # the Python name the models also take
        {"minavailable": 1},  # unknown: the models word the refusal
        {"replicas": 0},
        {"name": ""},
        {"topology": {"mode": "required"}},  # no level: the models word this too
        {"requests": {"gpu": None}},
        {"tolerations": [{"operator": "Sometimes"}]},
    ],
)
def test_anything_else_is_left_to_the_models(change: dict[str, Any]) -> None:
    gang = {**GANG, "tasks": [{**GANG["tasks"][0], **change}]}
    assert plain_gang(gang) is None
    assert place_plainly(CLUSTER, [gang], "best-fit", batch=False) is None


def test_a_node_field_of_another_type_is_left_to_the_models() -> None:
    cluster = {**CLUSTER, "nodes": [{**CLUSTER["nodes"][0], "ready": "yes"}]}
    assert plain_snapshot(cluster) is None
    assert plain_snapshot({"nodes": []}) is None  # levels are required


@pytest.mark.parametrize("gpus", [8, 16])
def test_the_answer_is_the_models_answer(gpus: int) -> None:
    """Placed, and unschedulable with its fit: the same JSON as `Placement.to_dict`."""
    gang = {**GANG, "tasks": [{**GANG["tasks"][0], "requests": {"gpu": gpus}}]}
    [plain] = place_plainly(CLUSTER, [gang], "best-fit", batch=False) or []
    assert plain == Cluster.from_snapshot(CLUSTER).place(gang).to_dict()
    assert plain["status"] == ("placed" if gpus == 8 else "unschedulable")


def test_errors_name_the_field_as_the_models_do() -> None:
    gang = {**GANG, "tasks": [{**GANG["tasks"][0], "requests": {"gpu": "lots"}}]}
    with pytest.raises(ValueError, match=r"^gangs\[0\]\.tasks\[0\]\.requests\.gpu: ") as plain:
        place_plainly(CLUSTER, [gang], "best-fit", batch=True)
    with pytest.raises(ValueError, match=r"^gangs\[0\]") as models:
        Cluster.from_snapshot(CLUSTER).place_all([gang])
    assert str(plain.value) == str(models.value)


def test_the_plain_readers_choices_are_the_models_literals() -> None:
    """The plain reader cannot import the models' `Literal` types (that is pydantic): its
    tuples must name the same values."""
    assert get_args(models.Mode) == plain._MODES
    assert get_args(models.Effect) == plain._EFFECTS
    assert get_args(models.Toleration.model_fields["operator"].annotation) == plain._OPERATORS
