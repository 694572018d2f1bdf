"""The placer's ranking policies by name: a module of its own so that `crdkit place` and
`Cluster` can check a policy without importing the pure-Python reference engine."""

from __future__ import annotations

__all__ = ["POLICIES"]

POLICIES = ("best-fit", "least-free", "binpack", "keep-whole")
"""The ranking policies, `best-fit` first (the default); `crdkit.placer.reference` defines them."""
