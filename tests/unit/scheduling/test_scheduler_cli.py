"""``crdkit scheduler``'s option parsing: bad input is a one-line usage error naming the option."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from crdkit.cli import main
from crdkit.scheduling.cli import parse_topology


def test_bad_options_are_one_line_usage_errors() -> None:
    runner = CliRunner()
    result = runner.invoke(
        main, ["scheduler", "--name", "x", "--levels", "a,b", "--topology", "required:c"]
    )
    assert result.exit_code == 2
    assert "--topology: level 'c' is not one of --levels (a, b)" in result.output
    result = runner.invoke(main, ["scheduler", "--name", "x", "--pod-groups", "kueue"])
    assert result.exit_code == 2
    assert "--pod-groups: unknown PodGroup API 'kueue'" in result.output


def test_topology_options_read_as_the_contract() -> None:
    assert parse_topology(None, ["a"]) is None
    assert parse_topology("unconstrained", ["a"]) == {"mode": "unconstrained"}
    assert parse_topology("preferred:a", ["a"]) == {"mode": "preferred", "level": "a"}
    with pytest.raises(ValueError, match="expected required:LEVEL"):
        parse_topology("required", ["a"])
