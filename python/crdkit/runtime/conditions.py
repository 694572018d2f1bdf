"""``metav1.Condition`` and the helpers that keep a status's conditions honest.

The rule that matters: ``lastTransitionTime`` changes only when a condition's *status* changes.
Rewriting reason, message or observedGeneration leaves it alone, so "Ready since ..." stays true.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from crdkit.resources import ApiModel, Time

if TYPE_CHECKING:
    from collections.abc import MutableSequence, Sequence

__all__ = [
    "Condition",
    "ConditionStatus",
    "find_condition",
    "is_condition_false",
    "is_condition_true",
    "remove_condition",
    "set_condition",
]

ConditionStatus = Literal["True", "False", "Unknown"]

# metav1.Condition's validation: reason is CamelCase-ish, type a qualified name.
_REASON = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")


class Condition(ApiModel):
    """One aspect of the object's current state, as a metav1.Condition."""

    type: str = Field(min_length=1, max_length=316)
    status: ConditionStatus
    # CamelCase letters, digits, '_', ',' or ':'; the same rule as metav1.Condition's.
    reason: str = Field(min_length=1, max_length=1024, pattern=_REASON.pattern)
    message: str = Field(default="", max_length=32768)
    observed_generation: int | None = Field(default=None, ge=0)
    last_transition_time: Time | None = None


def find_condition(conditions: Sequence[Condition], type_: str) -> Condition | None:
    """The condition of type ``type_``, or ``None``."""
    return next((c for c in conditions if c.type == type_), None)


def is_condition_true(conditions: Sequence[Condition], type_: str) -> bool:
    """Whether the condition exists and is ``True``."""
    found = find_condition(conditions, type_)
    return found is not None and found.status == "True"


def is_condition_false(conditions: Sequence[Condition], type_: str) -> bool:
    """Whether the condition exists and is ``False``."""
    found = find_condition(conditions, type_)
    return found is not None and found.status == "False"


def set_condition(
    conditions: MutableSequence[Condition],
    new: Condition,
    *,
    now: datetime | None = None,
) -> bool:
    """Add or update ``new`` in place; returns whether anything changed.

    ``lastTransitionTime`` becomes ``now`` (default: the current time, whole seconds, UTC) when
    the condition is new or its status flips, and is kept otherwise.
    """
    stamp = (now or datetime.now(UTC)).replace(microsecond=0)
    for index, current in enumerate(conditions):
        if current.type != new.type:
            continue
        transition = (
            current.last_transition_time
            if current.status == new.status and current.last_transition_time is not None
            else new.last_transition_time or stamp
        )
        updated = new.model_copy(update={"last_transition_time": transition})
        if updated == current:
            return False
        conditions[index] = updated
        return True
    conditions.append(
        new.model_copy(update={"last_transition_time": new.last_transition_time or stamp})
    )
    return True


def remove_condition(conditions: MutableSequence[Condition], type_: str) -> bool:
    """Remove the condition of type ``type_``; returns whether there was one."""
    for index, current in enumerate(conditions):
        if current.type == type_:
            del conditions[index]
            return True
    return False
