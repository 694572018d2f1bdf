"""`SchedulerOptions`: each bad value is refused naming its field, shorthand changes one field
and refuses a name that is no option, and the scheduler command's flags are the fields'."""

from __future__ import annotations

from typing import Any

import click
import pytest
from click.testing import CliRunner

from crdkit.cli import main
from crdkit.scheduling import GangScheduler, SchedulerOptions
from crdkit.scheduling.cli import parse_topology_rule, scheduler_command
from crdkit.scheduling.options import scheduler_flags


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("reservations_per_priority", -1),
        ("max_reservations", True),
        ("bind_concurrency", 0),
        ("size_credit", -0.5),
        ("pass_pause", float("nan")),
        ("settle_seconds", -1.0),
        ("explain_refresh", float("inf")),
        ("assume_ttl", 0.0),
        ("retry_backoff", (2.0, 1.0)),
        ("report_backoff", (-1.0, 1.0)),
        ("pod_group_discovery", 0.0),
        ("pod_group_discovery", float("inf")),
        ("policy", "worst-fit"),
        ("default_queue", ""),
    ],
)
def test_a_bad_value_is_refused_naming_its_field(field: str, value: Any) -> None:
    with pytest.raises(ValueError, match=rf"^{field}: "):
        SchedulerOptions(**{field: value})


def test_shorthand_changes_one_field_and_refuses_an_unknown_name() -> None:
    scheduler = GangScheduler("s", options=SchedulerOptions(size_credit=5.0), pass_pause=0.0)
    assert (scheduler.options.size_credit, scheduler.options.pass_pause) == (5.0, 0.0)
    with pytest.raises(TypeError, match=r"^size_credits: not an option"):
        GangScheduler("s", size_credits=1.0)


def test_an_unknown_pod_group_api_is_refused_and_none_means_every_one() -> None:
    with pytest.raises(ValueError, match=r"^pod_groups: unknown PodGroup API 'slurm'"):
        GangScheduler("s", pod_groups=("slurm",))
    assert GangScheduler("s").pod_groups == ("coscheduling", "volcano")
    assert GangScheduler("s", pod_groups=()).pod_groups == ()


def test_every_flagged_field_is_a_scheduler_flag_with_its_default() -> None:
    options = {
        param.opts[0]: param
        for param in scheduler_command.params
        if isinstance(param, click.Option)
    }
    for _, flag, default in scheduler_flags():
        assert options[flag.name].default == default


def test_a_bad_flag_value_is_a_usage_error_naming_the_flag() -> None:
    result = CliRunner().invoke(main, ["scheduler", "--name", "s", "--bind-concurrency", "0"])
    assert result.exit_code == 2
    assert "--bind-concurrency" in result.output


def test_topology_rules_are_checked_and_kept_largest_first() -> None:
    leaf = {"mode": "required", "level": "leaf"}
    options = SchedulerOptions(
        topology_by_size=((2, {"mode": "preferred", "level": "leaf"}), (8, leaf))
    )
    assert [pods for pods, _ in options.topology_by_size] == [8, 2]
    with pytest.raises(ValueError, match=r"^topology_by_size\[0\]: expected a number of pods"):
        SchedulerOptions(topology_by_size=((0, leaf),))
    with pytest.raises(ValueError, match=r"^topology_by_size: two rules for the same number"):
        SchedulerOptions(topology_by_size=((8, leaf), (8, leaf)))
    with pytest.raises(ValueError, match=r"^topology_by_size\[0\]: level 'rack' is not one"):
        GangScheduler("s", ["leaf"], topology_by_size=((8, {"mode": "required", "level": "rack"}),))


def test_the_topology_rule_flag_reads_pods_and_a_topology() -> None:
    assert parse_topology_rule("8:required:leaf", ["leaf"]) == (
        8,
        {"mode": "required", "level": "leaf"},
    )
    assert parse_topology_rule("2:unconstrained", ["leaf"]) == (2, {"mode": "unconstrained"})
    for bad in ("x:required:leaf", "0:required:leaf", "8:required:rack", "8:sideways:leaf"):
        with pytest.raises(ValueError, match=r"^--topology-rule: "):
            parse_topology_rule(bad, ["leaf"])
    result = CliRunner().invoke(
        main, ["scheduler", "--name", "s", "--levels", "leaf", "--topology-rule", "8:required:x"]
    )
    assert result.exit_code == 2
    assert "--topology-rule: level 'x' is not one of --levels" in result.output
