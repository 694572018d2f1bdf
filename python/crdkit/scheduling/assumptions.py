"""A decision's pods counted where they go before any API call (kube-scheduler's *assume*):
the room is taken the moment it is decided, so the next gang placed in the same pass, or by
another task, cannot be given it too.

`assume` is all or nothing; the `Reservation` it returns is bound or released by
`crdkit.scheduling.binder.Binder`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from crdkit.scheduling.mirror import pod_key

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from crdkit.scheduling.mirror import ClusterMirror

__all__ = ["PodBinding", "Reservation", "assume"]


@dataclass(frozen=True)
class PodBinding:
    """One pod of a decision: where it goes and what it asks for (milli-units)."""

    namespace: str
    name: str
    node: str
    milli: Mapping[str, int]
    uid: str | None = None
    """The pod's uid when it exists: the bind is refused if the name now holds another pod."""

    @property
    def key(self) -> str:
        return pod_key(self.namespace, self.name)


@dataclass
class Reservation:
    """The assumptions of one decision, until it is bound or released."""

    bindings: tuple[PodBinding, ...]
    done: bool = False


def assume(mirror: ClusterMirror, bindings: Sequence[PodBinding]) -> Reservation:
    """Count every pod on its node now (all or nothing: a node the mirror lacks raises
    ``ValueError`` and counts none)."""
    done: list[str] = []
    try:
        for binding in bindings:
            mirror.assume_pod(binding.key, binding.node, binding.milli, uid=binding.uid)
            done.append(binding.key)
    except ValueError:
        for key in done:
            mirror.forget_pod(key)
        raise
    return Reservation(tuple(bindings))
