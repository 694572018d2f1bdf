"""Whether an operator is at rest: what the explorer checks, beside a quiet spell, before it
judges a run.

A quiet spell alone (no write, no change for ``settle`` seconds) is a guess about time: on a
loaded machine a watch event can take longer than that to reach the operator, and a run judged
in between is compared half done. Two checks of order make it sound:

- **caught up**: each of the operator's informers of a recorded kind has seen the last change
  the history recorded for that kind (resourceVersions, which etcd numbers in one sequence);
- **idle**: no controller has a request ready or under way (a delayed requeue is not work:
  an operator that looks back every minute is at rest in between).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit.client.discovery import GroupVersionKind
from crdkit.resources import resource_info

if TYPE_CHECKING:
    from crdkit.runtime.manager import Manager
    from crdkit.testing.crashes.history import History

__all__ = ["behind", "busy"]


def busy(manager: Manager) -> list[str]:
    """The controllers with a request ready or being reconciled."""
    return [c.name for c in manager.controllers if len(c.queue) or c.queue.processing]


def _version(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def behind(manager: Manager, history: History) -> list[str]:
    """The operator's informers that have not yet seen the last recorded change of their kind
    (only those that watch the run's namespace whole: a selector's informer never sees the
    changes outside it). Where resourceVersions are not numbers nothing is called behind."""
    last: dict[str, int] = {}
    for event in history.events:
        version = _version(event.resource_version)
        if version is not None:
            last[event.kind] = max(last.get(event.kind, 0), version)
    late = []
    for key, informer in manager.informers.informers.items():
        if key.label_selector or key.field_selector:
            continue
        if key.namespace not in (None, history.namespace):
            continue
        resource = key.resource
        if isinstance(resource, GroupVersionKind):
            kind = resource.kind
        else:
            kind = resource_info(resource).kind
        if kind not in last:
            continue
        seen = _version(informer.resource_version)
        if seen is None or seen < last[kind]:
            late.append(f"{kind} informer at {informer.resource_version}, last change {last[kind]}")
    return late
