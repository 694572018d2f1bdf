"""Consistent hashing: which live shard an object belongs to.

Each shard owns ``tokens`` points on a 64-bit circle (a hash of its name and the point's index);
an object belongs to the shard of the first point at or after its own hash. When a shard joins
or leaves, only the objects between its points and their neighbours change hands, about
``1/n`` of them, and every replica computes the same answer from the same member list.
"""

from __future__ import annotations

import bisect
import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["DEFAULT_TOKENS", "HashRing", "object_key"]

DEFAULT_TOKENS = 128
"""Points per shard: enough that three shards get within a few percent of a third each."""


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def object_key(group: str, kind: str, namespace: str | None, name: str) -> str:
    """What an object is hashed by. Its owned objects hash by their owner's key, so they land
    on the owner's shard."""
    return f"{group}/{kind}/{namespace or ''}/{name}"


class HashRing:
    """An immutable ring over ``shards``; :meth:`shard_for` answers ``None`` when it is empty."""

    def __init__(self, shards: Iterable[str], tokens: int = DEFAULT_TOKENS) -> None:
        if tokens < 1:
            raise ValueError(f"tokens must be at least 1, got {tokens}")
        self.shards = frozenset(shards)
        points = sorted(
            (_hash(f"{shard}#{index}"), shard) for shard in self.shards for index in range(tokens)
        )
        self._hashes = [point for point, _ in points]
        self._owners = [shard for _, shard in points]

    def shard_for(self, key: str) -> str | None:
        """The shard ``key`` belongs to, or ``None`` if the ring has no shard."""
        if not self._hashes:
            return None
        index = bisect.bisect_left(self._hashes, _hash(key))
        return self._owners[index % len(self._owners)]
