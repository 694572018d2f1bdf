"""The placer: where a gang of pods goes, decided by the Rust core in `crdkit._placer`."""

from __future__ import annotations

from crdkit._placer import parse_quantity
from crdkit.placer.quantity import format_quantity

__all__ = ["format_quantity", "parse_quantity"]
