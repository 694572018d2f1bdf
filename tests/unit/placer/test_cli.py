"""`crdkit place`: contract JSON on stdout, exit 2 and one line naming the field on bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from crdkit.cli import main

CLUSTER = {
    "levels": ["example.com/rack"],
    "nodes": [
        {
            "name": f"n{i}",
            "labels": {"example.com/rack": f"r{i % 2}"},
            "allocatable": {"nvidia.com/gpu": 8},
        }
        for i in range(4)
    ],
}


def gang(name: str, replicas: int, priority: int = 0, **task: Any) -> dict[str, Any]:
    return {
        "name": name,
        "priority": priority,
        "topology": {"mode": "required", "level": "example.com/rack"},
        "tasks": [{"name": "w", "replicas": replicas, "requests": {"nvidia.com/gpu": 8}, **task}],
    }


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "cluster.json").write_text(json.dumps(CLUSTER))
    (tmp_path / "gang.yaml").write_text(json.dumps(gang("one", 2)))
    (tmp_path / "gangs.json").write_text(
        json.dumps([gang("first", 2), gang("second", 2), gang("urgent", 2, priority=9)])
    )
    (tmp_path / "bad.json").write_text(json.dumps(gang("bad", 2, requests={"cpu": "abc"})))
    return tmp_path


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["place", *args])


def test_one_gang_prints_one_placement(files: Path) -> None:
    result = run("--cluster", str(files / "cluster.json"), "--gang", str(files / "gang.yaml"))
    assert result.exit_code == 0, result.output
    placement = json.loads(result.stdout)
    assert placement["status"] == "placed"
    assert placement["domain"] == {"example.com/rack": "r0"}


def test_a_batch_prints_a_list_in_priority_order(files: Path) -> None:
    result = run("--cluster", str(files / "cluster.json"), "--gangs", str(files / "gangs.json"))
    assert result.exit_code == 0, result.output
    placements = json.loads(result.stdout)
    assert [(p["gang"], p["status"]) for p in placements] == [
        ("urgent", "placed"),
        ("first", "placed"),
        ("second", "unschedulable"),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gang", "bad.json"], 'gang.tasks[0].requests.cpu: invalid quantity "abc"'),
        (["--gang", "missing.json"], "gang: cannot read"),
        ([], "--gang, --gangs: give exactly one of them"),
        (["--gang", "gang.yaml", "--gangs", "gangs.json"], "--gang, --gangs: give exactly one"),
        (["--gangs", "gang.yaml"], "gangs: expected a list of gangs"),
    ],
)
def test_bad_input_exits_2_with_one_line(files: Path, args: list[str], message: str) -> None:
    paths = [str(files / a) if a.endswith((".json", ".yaml")) else a for a in args]
    result = run("--cluster", str(files / "cluster.json"), *paths)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert message in result.stderr


def test_policy_option_is_passed_through(files: Path) -> None:
    args = ["--cluster", str(files / "cluster.json"), "--gang", str(files / "gang.yaml")]
    for policy in ("best-fit", "least-free", "binpack"):
        result = run(*args, "--policy", policy)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["status"] == "placed"
    assert run(*args, "--policy", "nope").exit_code == 2
