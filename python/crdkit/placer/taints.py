"""Kubernetes' taint and toleration matching, shared by the reference engine and the
scheduling explanations (the Rust core has its own copy of the rule, kept equal by the
differential tests)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["tolerates"]


def tolerates(
    tolerations: Iterable[tuple[str, str, str, str | None]], taint: tuple[str, str, str]
) -> bool:
    """Whether any of ``tolerations`` ``(key, operator, value, effect)`` tolerates ``taint``
    ``(key, value, effect)``, by Kubernetes' rules: an omitted effect matches every effect, and
    an empty key with ``Exists`` matches every taint."""
    key, value, effect = taint
    for t_key, operator, t_value, t_effect in tolerations:
        if t_effect is not None and t_effect != effect:
            continue
        if operator == "Exists" and (t_key in ("", key)):
            return True
        if operator == "Equal" and t_key == key and t_value == value:
            return True
    return False
