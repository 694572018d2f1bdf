"""`Evictions`: a victim is busy from the decision until the pod cache shows each delete."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

import factories
from crdkit.resources import Pod
from crdkit.runtime.store import Store
from crdkit.scheduling.evictions import Evictions
from crdkit.scheduling.mirror import pod_key

VICTIM = "pod/ml/v"


def cached(store: Store[Pod], name: str, uid: str, *, terminating: bool = False) -> Pod:
    pod = factories.pod(name, gpus=8, namespace="ml", node="n1", uid=uid)
    if terminating:
        pod.metadata.deletion_timestamp = datetime(2026, 1, 1, tzinfo=UTC)
    store.upsert(pod)
    return pod


def test_busy_while_the_calls_run_and_until_the_cache_shows_the_delete() -> None:
    pods: Store[Pod] = Store()
    pod = cached(pods, "v-0", "u0")
    evictions = Evictions(pods)
    assert not evictions.busy(VICTIM)
    evictions.begin([VICTIM])
    assert evictions.busy(VICTIM)
    evictions.deleted(VICTIM, pod_key("ml", "v-0"), pod.metadata.uid)
    evictions.end([VICTIM])
    assert evictions.busy(VICTIM)  # the cache shows the pod as it was before the delete
    cached(pods, "v-0", "u0", terminating=True)
    assert not evictions.busy(VICTIM)


def test_a_pod_gone_or_replaced_under_its_name_counts_as_seen() -> None:
    pods: Store[Pod] = Store()
    first = cached(pods, "v-0", "u0")
    cached(pods, "v-1", "u1")
    evictions = Evictions(pods)
    evictions.begin([VICTIM])
    evictions.deleted(VICTIM, pod_key("ml", "v-0"), first.metadata.uid)
    evictions.deleted(VICTIM, pod_key("ml", "v-1"), "u1")
    evictions.end([VICTIM])
    pods.delete(pod_key("ml", "v-0"))
    assert evictions.busy(VICTIM)  # v-1 still shows as it was
    cached(pods, "v-1", "another")  # its controller made it again
    assert not evictions.busy(VICTIM)


def test_a_delete_that_failed_is_not_waited_for() -> None:
    pods: Store[Pod] = Store()
    cached(pods, "v-0", "u0")
    evictions = Evictions(pods)
    evictions.begin([VICTIM])
    evictions.end([VICTIM])  # the delete was refused: nothing recorded as deleted
    assert not evictions.busy(VICTIM)


@given(st.lists(st.sampled_from(["begin", "end"]), max_size=12))
def test_overlapping_evictions_of_one_victim_count_until_every_one_returns(
    steps: list[str],
) -> None:
    evictions = Evictions(Store())
    open_calls = 0
    for step in steps:
        if step == "begin":
            evictions.begin([VICTIM])
            open_calls += 1
        elif open_calls:
            evictions.end([VICTIM])
            open_calls -= 1
        assert evictions.busy(VICTIM) == (open_calls > 0)
