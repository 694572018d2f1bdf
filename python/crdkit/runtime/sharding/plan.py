"""What the sharder does with one object: pure rules, shared by the sharder and its tests.

The rules keep one invariant: an object held by a live shard leaves it only through that
shard's own acknowledgement (it drops its label after its last reconcile of the object), so no
object is ever reconciled by two shards at once. An object of a dead shard (its Lease expired or
was released) moves at once: no one is reconciling it. Owned objects (a job's pods) carry their
owner's shard only so that their events reach it; they are moved directly, with no drain.

The ring itself changes by :func:`next_membership`: a shard that died leaves it at once, and its
objects are *orphans*, which the survivors reconcile (each those the ring gives it) before the
sharder has relabelled them. A shard joins only once no object is an orphan: a joiner would
otherwise be given objects a survivor may be reconciling through their old label.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from crdkit.runtime.sharding.labels import MEMBERS_ANNOTATION, ORPHANS_ANNOTATION

if TYPE_CHECKING:
    from collections.abc import Mapping, Set

__all__ = ["Action", "Membership", "Placement", "next_membership", "next_step"]


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


@dataclass(frozen=True)
class Membership:
    """What the sharder publishes: the shards of the ring (``members``, which the hash ring is
    built from) and the ``orphans``, labels of shards outside it that objects still carry."""

    members: frozenset[str] = frozenset()
    orphans: frozenset[str] = frozenset()

    @classmethod
    def from_annotations(cls, annotations: Mapping[str, str] | None) -> Membership:
        """As published on the members Lease (nothing published: no member)."""
        found = annotations or {}

        def names(key: str) -> frozenset[str]:
            return frozenset(name for name in found.get(key, "").split(",") if name)

        return cls(names(MEMBERS_ANNOTATION), names(ORPHANS_ANNOTATION))

    def annotations(self) -> dict[str, str]:
        """The annotations that publish it."""
        return {
            MEMBERS_ANNOTATION: ",".join(sorted(self.members)),
            ORPHANS_ANNOTATION: ",".join(sorted(self.orphans)),
        }


def next_membership(published: Membership, live: Set[str], held: Set[str]) -> Membership:
    """The membership that follows ``published`` when the shards with a live Lease are ``live``
    and the objects carry the shard labels ``held``.

    A member that is not live leaves at once. A live shard that is not a member joins only
    when no object is an orphan (or when no member survives, so that no one is taking orphans
    over): a survivor reconciles an orphan by the ring of the published members, and the
    sharder relabels it by the same ring, so the two agree only while the ring does not grow.
    It may shrink: a shard that leaves a ring takes no object from a shard that stays.
    """
    survivors = published.members & live
    taking_over = bool(survivors) and bool(held - survivors)
    members = frozenset(survivors if taking_over else live)
    return Membership(members, frozenset(held - members))
