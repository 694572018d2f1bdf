"""`crdkit place`: contract JSON on stdout, exit 2 and one line naming the field on bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import factories
from crdkit.cli import main

CLUSTER = {
    "levels": ["example.com/rack"],
    "nodes": [
        factories.placer_node(f"n{i}", {"example.com/rack": f"r{i % 2}"}, cpu=None, pods=None)
        for i in range(4)
    ],
}


def gang(name: str, replicas: int, priority: int = 0, **task: Any) -> dict[str, Any]:
    return factories.gang(
        factories.task("w", replicas, 8, **task),
        name=name,
        priority=priority,
        topology={"mode": "required", "level": "example.com/rack"},
    )


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
        (["--gangs", "gang.yaml"], "gang.yaml: expected a list of gangs, got an object"),
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


def refused(result: Any) -> str:
    """The one stderr line of a clean refusal (exit 2, nothing on stdout, no exception)."""
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    return str(lines[0])


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("replicas", 2**64, "gang.tasks[0].replicas: Input should be less than or equal to"),
        ("replicas", 10**40, "gang.tasks[0].replicas: Input should be less than or equal to"),
        ("minAvailable", 2**64, "gang.tasks[0].minAvailable: Input should be less than"),
        ("slice", {"level": "example.com/rack", "size": 2**64}, "gang.tasks[0].slice.size:"),
    ],
)
def test_counts_beyond_64_bits_are_refused_by_field(
    files: Path, field: str, value: Any, message: str
) -> None:
    # Regression (issue 15): the binding's u64 conversion raised OverflowError, a traceback.
    document = gang("huge", 2)
    document["tasks"][0][field] = value
    (files / "huge.json").write_text(json.dumps(document))
    result = run("--cluster", str(files / "cluster.json"), "--gang", str(files / "huge.json"))
    assert message in refused(result)


def test_the_largest_64_bit_count_is_still_placed_or_answered(files: Path) -> None:
    (files / "max.json").write_text(json.dumps(gang("max", 2**64 - 1, minAvailable=1)))
    result = run("--cluster", str(files / "cluster.json"), "--gang", str(files / "max.json"))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["status"] == "minimal"


@pytest.mark.parametrize("which", ["--cluster", "--gang", "--gangs"])
def test_deeply_nested_json_is_a_clean_refusal(files: Path, which: str) -> None:
    # Regression (issue 15): the JSON decoder's RecursionError reached the user.
    deep = files / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    args = {
        "--cluster": str(files / "cluster.json"),
        "--gang": str(files / "gang.yaml"),
    }
    args[which] = str(deep)
    if which == "--gangs":
        del args["--gang"]
    result = run(*[part for pair in args.items() for part in pair])
    assert refused(result).endswith("deep.json: nested too deeply to read")


def test_a_cluster_file_holding_a_string_is_not_opened_as_a_path(files: Path) -> None:
    # Regression (issue 15): the string was taken for a file name and that file was read.
    named = files / "named.json"
    named.write_text(json.dumps(str(files / "cluster.json")))
    result = run("--cluster", str(named), "--gang", str(files / "gang.yaml"))
    assert refused(result) == (
        f"cluster: {named}: expected a cluster snapshot (an object), got a string"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "expected a gang (an object), got nothing (an empty document)"),
        (b"[1, 2]", "expected a gang (an object), got a list"),
        (b"7", "expected a gang (an object), got a number"),
        (b"\xff\xfe{}", "not UTF-8 text: invalid start byte at byte 0"),
        (b"when: 2001-02-30\n", "not JSON or YAML: day is out of range for month"),
        (b"a: [1,\n", "not JSON or YAML: line 2, column 1: "),
        (b"&a [*a]", ": nested more than 64 levels deep"),
    ],
)
def test_a_malformed_gang_file_is_named_in_one_line(
    files: Path, content: bytes, message: str
) -> None:
    bad = files / "bad.yaml"
    bad.write_bytes(content)
    line = refused(run("--cluster", str(files / "cluster.json"), "--gang", str(bad)))
    assert line.startswith(f"gang: {bad}")
    assert message in line
