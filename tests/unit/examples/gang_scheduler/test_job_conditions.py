"""metav1.Condition entries in a Volcano Job's conditions, next to Volcano's phase records."""

from __future__ import annotations

from datetime import UTC, datetime

from examples.gang_scheduler.job_conditions import find_job_condition, set_job_condition
from examples.gang_scheduler.models import JobCondition

from crdkit.runtime import Condition

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = datetime(2026, 1, 2, tzinfo=UTC)


def _ready(status: str = "True", message: str = "") -> Condition:
    return Condition.model_validate(
        {
            "type": "Ready",
            "status": status,
            "reason": "Because",
            "message": message,
            "lastTransitionTime": "2025-01-01T00:00:00Z",  # set_job_condition's now= wins
        }
    )


def test_volcanos_phase_records_are_left_alone() -> None:
    phase = JobCondition(status="Running", last_transition_time=T0)
    conditions = [phase]
    assert set_job_condition(conditions, _ready(), now=T1)
    assert conditions[0] is phase
    assert find_job_condition(conditions, "Ready") == JobCondition(
        type="Ready", status="True", reason="Because", message="", last_transition_time=T1
    )


def test_the_transition_time_moves_only_when_the_status_flips() -> None:
    conditions: list[JobCondition] = []
    set_job_condition(conditions, _ready(), now=T0)
    assert set_job_condition(conditions, _ready(message="new"), now=T1)
    assert conditions[0].last_transition_time == T0
    assert conditions[0].message == "new"
    assert not set_job_condition(conditions, _ready(message="new"), now=T1)
    assert set_job_condition(conditions, _ready("False"), now=T1)
    assert conditions[0].last_transition_time == T1
    assert len(conditions) == 1
