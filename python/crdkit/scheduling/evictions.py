"""The victim gangs this scheduler is evicting, until its pod cache shows the eviction.

An eviction marks the victim's pods ``DisruptionTarget`` and deletes them with their grace
period (`crdkit.scheduling.decisions.Evict`, or `RollBack` of an eviction a stopped scheduler
cut short). The marks outlive the decision: a pass that reads a marked pod not yet terminating
takes it for an eviction cut short and finishes it (`crdkit.scheduling.gang_builder`). A pass
reads the informer's cache, which lags the apiserver, so once the deletes have returned the
cache may still show a victim's pod marked and not terminating; taken for an eviction cut
short, the victim was deleted again, and its pods, still on their nodes until their grace
period ran out, were counted free (the queue-machine property test: a preemptor bound beside
its victims' terminating pods).

So a victim counts as being evicted here (`Evictions.busy`) from the decision until the cache
shows every pod this scheduler deleted terminating, or gone (or replaced: another uid), not
only until the calls return. The pod's own event marks its gang again then.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from crdkit.resources import Pod
    from crdkit.runtime.store import Store

__all__ = ["Evictions"]


class Evictions:
    """See the module docstring; gangs are named by their text (``GroupRef`` as a str)."""

    def __init__(self, pods: Store[Pod]) -> None:
        self._pods = pods
        self._under_way: Counter[str] = Counter()
        """Victims whose eviction's calls have not all returned (an eviction each)."""
        self._unseen: dict[str, dict[str, str | None]] = {}
        """Per victim, its pods deleted here whose deletion the cache does not show yet (by
        key, with the uid deleted)."""

    def begin(self, refs: Iterable[str]) -> None:
        """The eviction of ``refs`` is decided; its calls start."""
        self._under_way.update(refs)

    def deleted(self, ref: str, key: str, uid: str | None) -> None:
        """The apiserver took the delete of the pod ``key`` (``uid``), of victim ``ref``, with
        its grace period."""
        self._unseen.setdefault(ref, {})[key] = uid

    def end(self, refs: Iterable[str]) -> None:
        """The eviction's calls returned, each way."""
        self._under_way.subtract(refs)
        self._under_way = +self._under_way  # drop the counts down to zero

    def busy(self, ref: str) -> bool:
        """Whether ``ref`` is being evicted here: its calls are under way, or the cache still
        shows a pod it deleted as it was before."""
        if self._under_way[ref] > 0:
            return True
        unseen = self._unseen.get(ref)
        if unseen is None:
            return False
        for key, uid in list(unseen.items()):
            pod = self._pods.get(key)
            replaced = uid is not None and pod is not None and pod.metadata.uid != uid
            if pod is None or replaced or pod.metadata.deletion_timestamp is not None:
                del unseen[key]  # gone, replaced, or seen terminating
        if unseen:
            return True
        del self._unseen[ref]
        return False
