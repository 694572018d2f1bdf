"""Invariants of the gang-scheduler example's condition bookkeeping and NotHonored report."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from examples.gang_scheduler.honored import not_honored
from examples.gang_scheduler.job_conditions import set_job_condition
from examples.gang_scheduler.models import Job, JobCondition
from hypothesis import given
from hypothesis import strategies as st

from crdkit.runtime import Condition

T0 = datetime(2026, 1, 1, tzinfo=UTC)

updates = st.lists(
    st.tuples(
        st.sampled_from(["Scheduled", "Honored"]),
        st.sampled_from(["True", "False"]),
        st.sampled_from(["", "a", "b"]),
    ),
    max_size=12,
)


@given(updates)
def test_phase_records_stay_and_times_move_only_on_a_flip(
    steps: list[tuple[str, str, str]],
) -> None:
    phases = [JobCondition(status="Pending", last_transition_time=T0)]
    conditions = list(phases)
    flipped: dict[str, datetime] = {}
    last: dict[str, str] = {}
    for index, (type_, status, message) in enumerate(steps):
        now = T0 + timedelta(seconds=index + 1)
        new = Condition.model_validate(
            {
                "type": type_,
                "status": status,
                "reason": "R",
                "message": message,
                "lastTransitionTime": "2025-01-01T00:00:00Z",  # now= wins
            }
        )
        set_job_condition(conditions, new, now=now)
        if last.get(type_) != status:
            flipped[type_] = now
        last[type_] = status
    assert conditions[0] is phases[0]  # Volcano's own record: untouched, first
    typed = [c for c in conditions if c.type is not None]
    assert sorted(c.type for c in typed if c.type) == sorted(last)
    for condition in typed:
        assert condition.type is not None
        assert condition.status == last[condition.type]
        assert condition.last_transition_time == flipped[condition.type]


# Each field the controller does not act on, with a value that asks for something.
NOT_ACTED_ON: dict[str, tuple[str, Any]] = {
    "spec.volumes": ("volumes", [{"mountPath": "/d"}]),
    "spec.policies": ("policies", [{"event": "PodFailed", "action": "AbortJob"}]),
    "spec.plugins": ("plugins", {"env": []}),
    "spec.runningEstimate": ("runningEstimate", "2h"),
    "spec.queue": ("queue", "q1"),
    "spec.maxRetry": ("maxRetry", 0),
    "spec.ttlSecondsAfterFinished": ("ttlSecondsAfterFinished", 5),
    "spec.minSuccess": ("minSuccess", 1),
}
# Fields it acts on, and defaults that ask for nothing.
ACTED_ON: dict[str, Any] = {
    "schedulerName": "volcano",
    "minAvailable": 1,
    "priorityClassName": "p",
    "queue": "default",
    "maxRetry": 3,
    "networkTopology": {"mode": "soft"},
}


@given(
    st.sets(st.sampled_from(sorted(NOT_ACTED_ON))),
    st.sets(st.sampled_from(sorted(ACTED_ON))),
)
def test_exactly_the_fields_not_acted_on_are_named(ignored: set[str], used: set[str]) -> None:
    spec: dict[str, Any] = {"tasks": [{"name": "w", "replicas": 1}]}
    spec.update({key: ACTED_ON[key] for key in used})
    spec.update(dict(NOT_ACTED_ON[path] for path in ignored))
    named = not_honored(Job.model_validate({"metadata": {"name": "j"}, "spec": spec}))
    assert sorted(named) == sorted(ignored)
