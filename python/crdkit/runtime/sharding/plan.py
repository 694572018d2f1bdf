"""What the sharder does with one object: pure rules, shared by the sharder and its tests.

The rules keep one invariant: an object held by a live shard leaves it only through that
shard's own acknowledgement (it drops its label after its last reconcile of the object), so no
object is ever reconciled by two shards at once. An object of a dead shard (its Lease expired or
was released) moves at once: no one is reconciling it. Owned objects (a job's pods) carry their
owner's shard only so that their events reach it; they are moved directly, with no drain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Set

__all__ = ["Action", "Placement", "next_step"]


@dataclass(frozen=True)
class Placement:
    """What an object's labels say: its shard (``None``: unassigned) and whether it drains."""

    shard: str | None
    draining: bool = False


@dataclass(frozen=True)
class Action:
    """``assign``: label the object for ``shard`` (and drop any drain label); ``drain``: ask
    its shard to let it go; ``undrain``: it stays where it is after all."""

    op: Literal["assign", "drain", "undrain"]
    shard: str | None = None


def next_step(
    placement: Placement, desired: str | None, live: Set[str], *, handshake: bool = True
) -> Action | None:
    """The one step that brings ``placement`` closer to ``desired`` given the ``live`` shards;
    ``None`` when there is nothing to do (or nothing to do yet: a drain not acknowledged).

    ``handshake=False`` (owned objects) moves an object between live shards directly.
    """
    current = placement.shard
    if desired is None:
        return None  # no live shard: leave everything where it is
    if current is None or current not in live:
        return Action("assign", desired)
    if current == desired:
        return Action("undrain") if placement.draining else None
    if not handshake:
        return Action("assign", desired)
    return None if placement.draining else Action("drain")
