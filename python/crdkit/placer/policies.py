"""The placer's ranking policies by name: a module of its own so that `crdkit place` and
`Cluster` can check a policy without importing the pure-Python reference engine."""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_POLICY", "POLICIES"]

POLICIES = ("best-fit", "least-free", "binpack", "keep-whole")
"""The ranking policies; `crdkit.placer.reference` defines them."""

DEFAULT_POLICY: Final = "keep-whole"
"""The policy when none is named: best fit, except that it breaks a free domain only when no
broken one holds the gang. On the replay of the Alibaba trace it keeps 2.1-2.7 more leaves free
than best fit; on the saturated queue simulation the two decide alike (docs/performance.md)."""
