"""The simulated kubelet's pure parts: a pod's run time from its annotation."""

from __future__ import annotations

import pytest

from crdkit.resources import Pod
from crdkit.testing import RUN_SECONDS_ANNOTATION, annotated_run_time


def _pod(annotation: str | None) -> Pod:
    annotations = {} if annotation is None else {RUN_SECONDS_ANNOTATION: annotation}
    return Pod.model_validate({"metadata": {"name": "p", "annotations": annotations}})


@pytest.mark.parametrize(
    ("annotation", "default", "expected"),
    [
        ("30", None, 30.0),
        ("0.5", 10.0, 0.5),
        ("0", None, 0.0),
        (None, None, None),
        (None, 12.0, 12.0),
        # Not a run time: the pod runs for the default, as if it had no annotation.
        ("soon", 12.0, 12.0),
        ("-1", None, None),
        ("inf", 5.0, 5.0),
        ("nan", 5.0, 5.0),
    ],
)
def test_a_pods_annotation_gives_its_run_time(
    annotation: str | None, default: float | None, expected: float | None
) -> None:
    assert annotated_run_time(default)(_pod(annotation)) == expected
