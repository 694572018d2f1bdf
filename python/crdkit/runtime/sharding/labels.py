"""The labels a ring writes, and the names it checks before writing them.

An object of a ring carries ``shard.crdkit.io/<ring>: <shard>`` (who reconciles it) and, while
the sharder moves it away from a live shard, ``drain.shard.crdkit.io/<ring>: "true"``. A shard's
Lease carries ``shard.crdkit.io/ring: <ring>``, so the sharder lists a ring's members by label.
The sharder publishes the ring's membership on the Lease ``<ring>-members`` (labelled with the
ring, with no shard id), in two annotations: the members and the orphans, comma-separated.
Both names end up in label keys and values and in Lease names, so they must be DNS labels (63
characters at most: lower-case letters, digits and ``-`` inside), which are all three; a bad
one is refused when the manager is built, naming the option, not when the first Lease or patch
fails. (Lower case only, so two ids cannot differ by case alone and share a Lease.)
"""

from __future__ import annotations

import re
import socket
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "MEMBERS_ANNOTATION",
    "ORPHANS_ANNOTATION",
    "RING_LABEL",
    "SHARD_ID_LABEL",
    "default_shard_id",
    "drain_label",
    "labels_of",
    "lease_name",
    "members_lease_name",
    "shard_label",
    "shard_selector",
    "validate_name",
]

RING_LABEL = "shard.crdkit.io/ring"
"""On every shard Lease: the ring it belongs to."""

SHARD_ID_LABEL = "shard.crdkit.io/id"
"""On every shard Lease: the shard's id."""

MEMBERS_ANNOTATION = "shard.crdkit.io/members"
"""On the ring's members Lease: the shards the hash ring is built from."""

ORPHANS_ANNOTATION = "shard.crdkit.io/orphans"
"""On the ring's members Lease: shards outside the ring whose labels objects still carry."""

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_NOT_IN_A_NAME = re.compile(r"[^a-z0-9-]+")


def validate_name(value: str, *, field: str) -> str:
    """``value`` if it is a DNS label (a label value, a label name and part of a Lease name);
    ``ValueError`` naming ``field`` otherwise."""
    if not _DNS_LABEL.match(value):
        raise ValueError(
            f"{field}: {value!r} is not a DNS label (at most 63 characters: lower-case letters, "
            "digits and '-', starting and ending with a letter or digit)"
        )
    return value


def labels_of(obj: Any) -> dict[str, str]:
    """An object's labels, whatever its shape (a typed model or its metadata alone)."""
    return getattr(obj.metadata, "labels", None) or {}


def shard_label(ring: str) -> str:
    """The label naming an object's shard in ``ring``."""
    return f"shard.crdkit.io/{ring}"


def drain_label(ring: str) -> str:
    """The label that asks an object's shard in ``ring`` to let it go."""
    return f"drain.shard.crdkit.io/{ring}"


def shard_selector(ring: str, shard: str, orphans: Iterable[str] = ()) -> str:
    """The label selector of the objects ``shard`` holds in ``ring``, and of those still
    labelled for the ``orphans`` (dead shards), which it may take over."""
    others = sorted(set(orphans) - {shard})
    if not others:
        return f"{shard_label(ring)}={shard}"
    return f"{shard_label(ring)} in ({','.join([shard, *others])})"


def members_lease_name(ring: str) -> str:
    """The name of the Lease the sharder publishes ``ring``'s membership on."""
    return f"{ring}-members"


def lease_name(ring: str, shard: str) -> str:
    """The name of ``shard``'s Lease in ``ring``."""
    return f"{ring}-shard-{shard}"


def default_shard_id() -> str:
    """The host name, made a label value: a pod's name, so a restarted container keeps its
    shard and its objects stay where they are."""
    name = _NOT_IN_A_NAME.sub("-", socket.gethostname().lower()).strip("-")[:63].strip("-")
    return name or "shard"
