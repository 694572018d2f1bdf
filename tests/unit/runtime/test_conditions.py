"""Unit tests of the metav1.Condition helpers: lastTransitionTime moves only on status flips."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

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


def ready(status: str, reason: str = "Reconciled", message: str = "") -> Condition:
    return Condition(type="Ready", status=status, reason=reason, message=message)  # type: ignore[arg-type]


def test_new_condition_gets_transition_time() -> None:
    conditions: list[Condition] = []
    assert set_condition(conditions, ready("True"), now=T0)
    assert conditions[0].last_transition_time == T0
    assert is_condition_true(conditions, "Ready")
    assert not is_condition_false(conditions, "Ready")


def test_same_status_keeps_transition_time_but_updates_message() -> None:
    conditions: list[Condition] = []
    set_condition(conditions, ready("True"), now=T0)
    assert set_condition(conditions, ready("True", message="still fine"), now=T1)
    assert conditions[0].last_transition_time == T0
    assert conditions[0].message == "still fine"
    assert not set_condition(conditions, ready("True", message="still fine"), now=T1)


def test_status_flip_moves_transition_time_to_whole_seconds() -> None:
    conditions: list[Condition] = []
    set_condition(conditions, ready("True"), now=T0)
    assert set_condition(conditions, ready("False", reason="Broken"), now=T1)
    assert conditions[0].last_transition_time == T1.replace(microsecond=0)
    assert is_condition_false(conditions, "Ready")


def test_find_and_remove() -> None:
    conditions: list[Condition] = []
    set_condition(conditions, ready("True"), now=T0)
    set_condition(conditions, Condition(type="Degraded", status="False", reason="Fine"), now=T0)
    found = find_condition(conditions, "Degraded")
    assert found is not None
    assert found.reason == "Fine"
    assert remove_condition(conditions, "Degraded")
    assert not remove_condition(conditions, "Degraded")
    assert find_condition(conditions, "Degraded") is None


def test_wire_format_is_camel_case() -> None:
    conditions: list[Condition] = []
    set_condition(conditions, ready("True"), now=T0)
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
    base: dict[str, object] = {"type": "Ready", "status": "True", "reason": "Ok"}
    with pytest.raises(ValidationError, match=bad):
        Condition(**{**base, **fields})  # type: ignore[arg-type]
