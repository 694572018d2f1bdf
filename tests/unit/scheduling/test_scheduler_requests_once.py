"""A pod's requests are parsed once, by the mirror, however many passes look at its gang
(one of the rules in `tests/unit/test_scheduling_rules.py`): `GangScheduler` on the fake
cluster with a gang that never fits, woken again and again by new nodes."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from _fake_scheduling import add_node, gpu_pod, scheduling

import crdkit.scheduling.gangs
import crdkit.scheduling.mirror
from crdkit.scheduling.requests import pod_requests
from crdkit.testing import eventually

if TYPE_CHECKING:
    import pytest

    from crdkit.resources import Pod


async def test_a_waiting_pods_requests_are_parsed_once_by_the_mirror(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed: Counter[tuple[str, str]] = Counter()

    def counted(pod: Pod | Any) -> dict[str, int]:
        parsed[(pod.metadata.name or "", pod.metadata.resource_version or "")] += 1
        return pod_requests(pod)

    def refused(pod: Any) -> dict[str, int]:
        raise AssertionError("the scheduler's gangs must read requests from the mirror")

    monkeypatch.setattr(crdkit.scheduling.mirror, "pod_requests", counted)
    monkeypatch.setattr(crdkit.scheduling.gangs, "pod_requests", refused)
    async with scheduling() as (scheduler, client):
        await add_node(client, "n1")
        await client.create(gpu_pod("huge", 16))  # more than any node: waits for ever
        await eventually(
            lambda: scheduler.reporter.explanations == 1, what="the huge pod explained"
        )
        passes = scheduler.passes
        for index in range(2, 6):  # each new node wakes the waiting gang again
            await add_node(client, f"n{index}")
        await eventually(
            lambda: scheduler.passes >= passes + 2 and scheduler.idle, what="passes again"
        )
    assert scheduler.passes >= passes + 2
    huge = {version: count for (name, version), count in parsed.items() if name == "huge"}
    assert huge, "the mirror never parsed the pod"
    assert all(count == 1 for count in huge.values()), huge
