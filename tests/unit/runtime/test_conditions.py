"""Unit tests of the metav1.Condition helpers: lastTransitionTime moves only on status flips,
and Condition's schema is metav1.Condition's."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import pytest
import yaml
from pydantic import Field, ValidationError

from crdkit.crd import ListMapKeys, structural_schema
from crdkit.resources import ApiModel
from crdkit.runtime.conditions import (
    Condition,
    find_condition,
    is_condition_false,
    is_condition_true,
    remove_condition,
    set_condition,
)

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
T1 = datetime(2026, 1, 1, 12, 5, 0, 123456, tzinfo=UTC)


def ready(status: str, reason: str = "Reconciled", message: str = "") -> dict[str, Any]:
    return {"type": "Ready", "status": status, "reason": reason, "message": message}


def test_new_condition_gets_transition_time() -> None:
    conditions: list[Condition] = []
    assert set_condition(conditions, **ready("True"), now=T0)
    assert conditions[0].last_transition_time == T0
    assert is_condition_true(conditions, "Ready")
    assert not is_condition_false(conditions, "Ready")


def test_same_status_keeps_transition_time_but_updates_message() -> None:
    conditions: list[Condition] = []
    set_condition(conditions, **ready("True"), now=T0)
    assert set_condition(conditions, **ready("True", message="still fine"), now=T1)
    assert conditions[0].last_transition_time == T0
    assert conditions[0].message == "still fine"
    assert not set_condition(conditions, **ready("True", message="still fine"), now=T1)


def test_status_flip_moves_transition_time_to_whole_seconds() -> None:
    conditions: list[Condition] = []
    set_condition(conditions, **ready("True"), now=T0)
    assert set_condition(conditions, **ready("False", reason="Broken"), now=T1)
    assert conditions[0].last_transition_time == T1.replace(microsecond=0)
    assert is_condition_false(conditions, "Ready")


def test_find_and_remove() -> None:
    conditions: list[Condition] = []
    set_condition(conditions, **ready("True"), now=T0)
    set_condition(conditions, type="Degraded", status="False", reason="Fine", now=T0)
    found = find_condition(conditions, "Degraded")
    assert found is not None
    assert found.reason == "Fine"
    assert remove_condition(conditions, "Degraded")
    assert not remove_condition(conditions, "Degraded")
    assert find_condition(conditions, "Degraded") is None


def test_wire_format_is_camel_case() -> None:
    conditions: list[Condition] = []
    set_condition(conditions, **ready("True"), now=T0)
    data = conditions[0].model_dump(mode="json", by_alias=True, exclude_none=True)
    assert data == {
        "type": "Ready",
        "status": "True",
        "reason": "Reconciled",
        "message": "",
        "lastTransitionTime": "2026-01-01T12:00:00Z",
    }


@pytest.mark.parametrize(
    ("fields", "bad"),
    [
        ({"status": "Yes"}, "status"),
        ({"reason": "not camel"}, "reason"),
        ({"reason": ""}, "reason"),
        ({"type": ""}, "type"),
        ({"observed_generation": -1}, "observed_generation"),
    ],
)
def test_bad_conditions_name_the_field(fields: dict[str, object], bad: str) -> None:
    base: dict[str, object] = {**ready("True", reason="Ok"), "last_transition_time": T0}
    with pytest.raises(ValidationError, match=bad):
        Condition(**{**base, **fields})
    with pytest.raises(ValidationError, match=bad):
        set_condition([], **{**ready("True", reason="Ok"), **fields})


_VALID = {
    "type": "Ready",
    "status": "True",
    "reason": "Ok",
    "message": "",
    "lastTransitionTime": "2026-01-01T12:00:00Z",
}


@pytest.mark.parametrize(
    ("change", "bad"),
    [
        ({"message": None}, "message"),
        ({"lastTransitionTime": None}, "lastTransitionTime"),
        ({"type": "Not Qualified"}, "type"),
        ({"type": "-leading"}, "type"),
        ({"type": "a" * 317}, "type"),
        ({"type": "Example.COM/Ready"}, "type"),  # the prefix is a lower-case DNS subdomain
        ({"reason": "Ends,"}, "reason"),
        ({"reason": "R" * 1025}, "reason"),
        ({"message": "m" * 32769}, "message"),
        ({"observedGeneration": "1"}, "observedGeneration"),
    ],
)
def test_documents_metav1_refuses_are_refused(change: dict[str, Any], bad: str) -> None:
    document = {k: v for k, v in {**_VALID, **change}.items() if v is not None}
    with pytest.raises(ValidationError, match=bad):
        Condition.model_validate(document)


@pytest.mark.parametrize(
    "change",
    [
        {},
        {"type": "example.com/Ready"},
        {"type": "Kubernetes.io"},  # the last segment may hold dots
        {"reason": "A_b:c,D"},
        {"observedGeneration": 0},
        {"message": "m" * 32768},
    ],
)
def test_documents_metav1_accepts_are_accepted(change: dict[str, Any]) -> None:
    assert Condition.model_validate({**_VALID, **change}).type == {**_VALID, **change}["type"]


def test_set_condition_takes_a_condition_or_its_fields_not_both() -> None:
    condition = Condition(**ready("True"), last_transition_time=T0)
    with pytest.raises(TypeError, match="not both"):
        set_condition([], condition, type="Ready")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="needs a Condition"):
        set_condition([])  # type: ignore[call-overload]


def test_a_whole_condition_keeps_the_old_time_unless_the_status_flips() -> None:
    conditions: list[Condition] = []
    set_condition(conditions, **ready("True"), now=T0)
    later = T1.replace(microsecond=0)
    assert set_condition(
        conditions, Condition(**ready("True", message="x"), last_transition_time=later)
    )
    assert conditions[0].last_transition_time == T0
    set_condition(conditions, Condition(**ready("False"), last_transition_time=later))
    assert conditions[0].last_transition_time == later


# -- the schema, against controller-gen's output for metav1.Condition ----------------------------

CRDS = Path(__file__).parents[2] / "data" / "crds"


def _without_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_without_descriptions(v) for v in node]
    return node


_METAV1_REQUIRED = ["lastTransitionTime", "message", "reason", "status", "type"]


def _condition_lists(node: Any) -> list[dict[str, Any]]:
    """Every array of metav1.Condition in a CRD schema, recognised by its item fields (projects'
    own condition types, such as cert-manager's, require fewer)."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        items = node.get("items", {})
        if (
            node.get("type") == "array"
            and set(items.get("properties", {})) == {*_METAV1_REQUIRED, "observedGeneration"}
            and items.get("required") == _METAV1_REQUIRED
        ):
            found.append(node)
        for child in node.values():
            found.extend(_condition_lists(child))
    elif isinstance(node, list):
        for child in node:
            found.extend(_condition_lists(child))
    return found


def _real_condition_lists() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(CRDS.glob("*.yaml")):
        text = path.read_text()
        if "lastTransitionTime" not in text:
            continue
        for document in yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            for version in document["spec"]["versions"]:
                for found in _condition_lists(version["schema"]["openAPIV3Schema"]):
                    out.append((f"{path.name} {version['name']}", found))
    return out


class WithConditions(ApiModel):
    conditions: Annotated[list[Condition], ListMapKeys("type")] = Field(default_factory=list)


REAL = _real_condition_lists()


def test_there_are_real_condition_lists_to_compare_with() -> None:
    assert len({where.split()[0] for where, _ in REAL}) >= 4  # Kueue's three, Volcano's


@pytest.mark.parametrize(("where", "real"), REAL, ids=[where for where, _ in REAL])
def test_the_schema_is_controller_gens_for_metav1_condition(
    where: str, real: dict[str, Any]
) -> None:
    generated = structural_schema(WithConditions)["properties"]["conditions"]
    assert _without_descriptions(generated["items"]) == _without_descriptions(real["items"])
    if "x-kubernetes-list-type" in real:  # the list's own markers are the project's choice
        markers = {k: v for k, v in real.items() if k.startswith("x-kubernetes-list")}
        assert {k: v for k, v in generated.items() if k.startswith("x-kubernetes-list")} == markers
