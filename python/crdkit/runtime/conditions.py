"""``metav1.Condition`` and the helpers that keep a status's conditions honest.

The rule that matters: ``lastTransitionTime`` changes only when a condition's *status* changes.
Rewriting reason, message or observedGeneration leaves it alone, so "Ready since ..." stays true.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, overload

from pydantic import Field

from crdkit.resources import ApiModel, Time

if TYPE_CHECKING:
    from collections.abc import MutableSequence, Sequence

__all__ = [
    "REASON_PATTERN",
    "TYPE_PATTERN",
    "Condition",
    "ConditionStatus",
    "find_condition",
    "is_condition_false",
    "is_condition_true",
    "remove_condition",
    "set_condition",
]

ConditionStatus = Literal["True", "False", "Unknown"]

# metav1.Condition's validation (its kubebuilder markers), so a CRD generated from a status
# holding Conditions has the schema controller-gen writes, and pydantic checks the same.
TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"


class Condition(ApiModel):
    """One aspect of the object's current state, as a metav1.Condition."""

    # Every field but observedGeneration is required, as in Kubernetes: message may be empty
    # but must be there, reason is one CamelCase word. set_condition fills in
    # lastTransitionTime. (The docstring above is the CRD's description.)

    type: str = Field(
        max_length=316,
        pattern=TYPE_PATTERN,
        description="The aspect this condition is about, CamelCase or domain/CamelCase.",
    )
    status: ConditionStatus = Field(description="True, False or Unknown.")
    observed_generation: int | None = Field(
        default=None,
        ge=0,
        json_schema_extra={"format": "int64"},
        description="The .metadata.generation the condition was set for.",
    )
    last_transition_time: Time = Field(
        description="When the status last changed (not the reason or message)."
    )
    reason: str = Field(
        min_length=1,
        max_length=1024,
        pattern=REASON_PATTERN,
        description="Why the condition is as it is, as one CamelCase word.",
    )
    message: str = Field(max_length=32768, description="Details for people; may be empty.")


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


@overload
def set_condition(conditions: MutableSequence[Condition], new: Condition, /) -> bool: ...


@overload
def set_condition(
    conditions: MutableSequence[Condition],
    /,
    *,
    type: str,
    status: ConditionStatus,
    reason: str,
    message: str = "",
    observed_generation: int | None = None,
    now: datetime | None = None,
) -> bool: ...


def set_condition(
    conditions: MutableSequence[Condition],
    new: Condition | None = None,
    /,
    *,
    type: str | None = None,
    status: ConditionStatus | None = None,
    reason: str | None = None,
    message: str = "",
    observed_generation: int | None = None,
    now: datetime | None = None,
) -> bool:
    """Add or update a condition in place; returns whether anything changed.

    ``set_condition(conditions, type="Ready", status="True", reason="Applied")`` stamps
    ``lastTransitionTime`` with ``now`` (default: the current time, whole seconds, UTC) when
    the condition is new or its status flips, and keeps the old time otherwise. Given a whole
    ``Condition``, its own ``lastTransitionTime`` is the time of a flip.
    """
    if new is None:
        if type is None or status is None or reason is None:
            raise TypeError("set_condition needs a Condition, or type=, status= and reason=")
        stamp = (now or datetime.now(UTC)).replace(microsecond=0)
        new = Condition(
            type=type,
            status=status,
            reason=reason,
            message=message,
            observed_generation=observed_generation,
            last_transition_time=stamp,
        )
    elif type is not None or status is not None or reason is not None or now is not None:
        raise TypeError("set_condition takes a Condition or its fields, not both")
    for index, current in enumerate(conditions):
        if current.type != new.type:
            continue
        if current.status == new.status:
            new = new.model_copy(update={"last_transition_time": current.last_transition_time})
        if new == current:
            return False
        conditions[index] = new
        return True
    conditions.append(new)
    return True


def remove_condition(conditions: MutableSequence[Condition], type_: str) -> bool:
    """Remove the condition of type ``type_``; returns whether there was one."""
    for index, current in enumerate(conditions):
        if current.type == type_:
            del conditions[index]
            return True
    return False
