"""The command's flags: which scheduler the pods name, and whether it runs in process."""

from __future__ import annotations

import pytest
from examples.gang_scheduler.operator import POD_SCHEDULER_NAME
from examples.gang_scheduler.run import parse_args


def test_by_default_the_scheduler_runs_in_process_under_the_examples_name() -> None:
    args = parse_args([])
    assert args.run_scheduler is True
    assert args.scheduler_name == POD_SCHEDULER_NAME
    assert args.node_selector is None


def test_no_scheduler_names_the_platforms_scheduler() -> None:
    args = parse_args(["--scheduler-name", "crdkit-gang", "--no-scheduler"])
    assert args.run_scheduler is False
    assert args.scheduler_name == "crdkit-gang"


def test_a_node_selector_with_no_scheduler_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_args(["--no-scheduler", "--node-selector", "pool=a"])
    assert exited.value.code == 2
    assert "--node-selector: not with --no-scheduler" in capsys.readouterr().err
