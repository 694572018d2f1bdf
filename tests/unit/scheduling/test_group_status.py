"""PodGroup phases from pod counts, by the coscheduling and the Volcano rules."""

from __future__ import annotations

import pytest

from crdkit.scheduling.groups import GroupCounts
from crdkit.scheduling.groups.coscheduling import coscheduling_phase
from crdkit.scheduling.groups.volcano import volcano_phase


@pytest.mark.parametrize(
    ("counts", "binding", "phase"),
    [
        (GroupCounts(pods=3), False, "Pending"),
        (GroupCounts(pods=3), True, "Scheduling"),
        (GroupCounts(pods=3, bound=3), False, "Scheduling"),
        (GroupCounts(pods=3, bound=3, running=3), False, "Running"),
        (GroupCounts(pods=3, bound=1, running=1, succeeded=2), False, "Running"),
        (GroupCounts(pods=3, succeeded=3), False, "Finished"),
        (GroupCounts(pods=4, succeeded=3, failed=1), False, "Finished"),
        (GroupCounts(pods=3, succeeded=2, failed=1), False, "Failed"),
        (GroupCounts(pods=3, bound=1, failed=2), False, "Failed"),
    ],
)
def test_coscheduling_phases(counts: GroupCounts, binding: bool, phase: str) -> None:
    assert coscheduling_phase(3, counts, binding) == phase


@pytest.mark.parametrize(
    ("counts", "phase"),
    [
        (GroupCounts(pods=2), "Pending"),
        (GroupCounts(pods=3, bound=3), "Running"),
        (GroupCounts(pods=3, bound=1), "Unknown"),
        (GroupCounts(pods=3, succeeded=3), "Completed"),
    ],
)
def test_volcano_phases(counts: GroupCounts, phase: str) -> None:
    assert volcano_phase(3, counts) == phase
