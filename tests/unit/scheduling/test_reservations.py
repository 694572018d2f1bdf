"""The reservation rules' small parts: a pod's declared run time (and the error that names a
bad annotation), its declared end, and how a held room is named in messages."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import factories
from crdkit.resources import Pod
from crdkit.scheduling.reservations import DomainReservation
from crdkit.scheduling.runtime_bounds import (
    KUEUE_MAX_EXEC_TIME_LABEL,
    MAX_RUNTIME_ANNOTATION,
    START_TIME_PRECISION,
    pod_end,
    pod_runtime_bound,
)


def pod(
    deadline: int | None = None,
    annotation: str | None = None,
    started: str | None = None,
    kueue: str | None = None,
) -> Pod:
    return factories.pod(
        annotations=None if annotation is None else {MAX_RUNTIME_ANNOTATION: annotation},
        labels=None if kueue is None else {KUEUE_MAX_EXEC_TIME_LABEL: kueue},
        status=None if started is None else {"startTime": started},
        activeDeadlineSeconds=deadline,
    )


def test_the_bound_comes_from_the_most_trusted_place_that_declares_one() -> None:
    assert pod_runtime_bound(pod()) is None
    assert pod_runtime_bound(pod(deadline=600)) == 600
    assert pod_runtime_bound(pod(kueue="120")) == 120
    assert pod_runtime_bound(pod(annotation="90.5")) == 90.5
    # the kubelet's deadline over Kueue's limit over crdkit's annotation, whichever is smaller
    assert pod_runtime_bound(pod(deadline=600, kueue="60", annotation="30")) == 600
    assert pod_runtime_bound(pod(kueue="60", annotation="30")) == 60


@pytest.mark.parametrize("text", ["soon", "0", "-5", "1.5", "inf"])
def test_a_bad_kueue_label_is_an_error_naming_it(text: str) -> None:
    with pytest.raises(ValueError, match=rf"metadata\.labels\[{KUEUE_MAX_EXEC_TIME_LABEL}\]"):
        pod_runtime_bound(pod(kueue=text))


@pytest.mark.parametrize("text", ["soon", "0", "-5", "nan", "inf"])
def test_a_bad_annotation_is_an_error_naming_it(text: str) -> None:
    with pytest.raises(ValueError, match=rf"metadata\.annotations\[{MAX_RUNTIME_ANNOTATION}\]"):
        pod_runtime_bound(pod(annotation=text))


def test_the_end_counts_from_the_start_or_from_now() -> None:
    start = datetime(2026, 12, 2, 12, 0, tzinfo=UTC).timestamp()
    # the start shows whole seconds: the pod may have started up to a second later
    shown = pod_end(pod(deadline=60, started="2026-12-02T12:00:00Z"), now=0.0)
    assert shown == start + START_TIME_PRECISION + 60
    assert pod_end(pod(deadline=60), now=1000.0) == 1060.0
    assert pod_end(pod(), now=1000.0) is None


def test_a_room_is_named_by_its_domain_or_its_nodes() -> None:
    leaf = DomainReservation("g", "r1", 0, "leaf", "l3", frozenset({"a", "b"}), None)
    assert leaf.where() == "leaf=l3"
    few = DomainReservation("g", "r2", 0, None, None, frozenset({"n2", "n1"}), None)
    assert few.where() == "nodes n1, n2"
    many = DomainReservation(
        "g", "r3", 0, None, None, frozenset(f"n{i:02d}" for i in range(10)), None
    )
    assert many.where() == "nodes n00, n01, n02, n03, n04, n05, n06, n07 and 2 more"
