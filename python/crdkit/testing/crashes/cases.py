"""The faults the explorer injects, and the case names a failure is rerun by.

A case is a fault kind and the number of the write (in the fault-free run) it hits, written
``kind:k`` (``kill-after:7``): the form ``--crash-case`` takes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

__all__ = ["FAULT_KINDS", "CrashCase", "FaultKind"]

FaultKind = Literal["kill-before", "kill-after", "lost-response", "unobserved", "stale"]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)
"""Every kind, in the order cases are explored:

``kill-before``
    the operator dies as it is about to send write k (the write is not made);
``kill-after``
    write k reaches the server, the operator dies before the answer returns;
``lost-response``
    write k is applied, the operator's client sees the connection reset and goes on;
``unobserved``
    the operator's watches drop the event of write k (the next event of that object, if any,
    brings its state: a coalesced watch);
``stale``
    as ``kill-after``, and the restarted operator's caches start from the state just before
    write k (a lagging apiserver's list), then catch up through their watches.

After a kill a new operator is started on a new client, as a restarted pod would be.
"""


@dataclass(frozen=True, order=True)
class CrashCase:
    """One fault on one write: ``index`` counts the fault-free run's writes from 1."""

    kind: FaultKind
    index: int

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"no fault kind {self.kind!r}: one of {', '.join(FAULT_KINDS)}")
        if self.index < 1:
            raise ValueError(f"writes are counted from 1, got {self.index}")

    @classmethod
    def parse(cls, text: str) -> CrashCase:
        """``kill-after:7`` → ``CrashCase("kill-after", 7)``."""
        kind, sep, index = text.strip().rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(f"a crash case is kind:write, like kill-after:7, got {text!r}")
        if kind not in FAULT_KINDS:
            raise ValueError(f"no fault kind {kind!r}: one of {', '.join(FAULT_KINDS)}")
        return cls(kind, int(index))

    @property
    def kills(self) -> bool:
        """Whether the operator dies (and a new one is started)."""
        return self.kind in ("kill-before", "kill-after", "stale")

    def __str__(self) -> str:
        return f"{self.kind}:{self.index}"
