"""``metav1.Condition`` entries in a Volcano Job's ``status.conditions``.

Volcano's list also holds its own phase records (a ``status`` and a time, no ``type``); these
helpers only ever read or replace entries of a given ``type`` and leave the others as they are.
As with ``crdkit.runtime.set_condition``, ``lastTransitionTime`` moves only when a condition's
status flips.
"""

from __future__ import annotations

from datetime import datetime

from crdkit.runtime import Condition
from examples.gang_scheduler.models import JobCondition


def find_job_condition(conditions: list[JobCondition], type_: str) -> JobCondition | None:
    """The entry of type ``type_``, or ``None``."""
    return next((c for c in conditions if c.type == type_), None)


def set_job_condition(
    conditions: list[JobCondition], new: Condition, *, now: datetime | None = None
) -> bool:
    """Add or update ``new`` in place; returns whether anything changed.

    On a flip (or a new entry) the time is ``now`` when given, else ``new``'s own
    ``lastTransitionTime`` (which metav1.Condition requires).
    """
    stamp = now.replace(microsecond=0) if now is not None else new.last_transition_time
    entry = JobCondition(
        type=new.type,
        status=new.status,
        reason=new.reason,
        message=new.message,
        observed_generation=new.observed_generation,
        last_transition_time=stamp,
    )
    for index, current in enumerate(conditions):
        if current.type != new.type:
            continue
        if current.status == entry.status and current.last_transition_time is not None:
            entry.last_transition_time = current.last_transition_time
        if entry == current:
            return False
        conditions[index] = entry
        return True
    conditions.append(entry)
    return True
