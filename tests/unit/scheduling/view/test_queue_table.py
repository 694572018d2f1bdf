"""The queue table (`crdkit.scheduling.view.table`): its cells, and that it fits the terminal."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crdkit.scheduling.view.format import GangView, PublishedSnapshot
from crdkit.scheduling.view.published import parse_published
from crdkit.scheduling.view.table import (
    ELLIPSIS,
    MIN_FLEX,
    duration_text,
    flex_table,
    queue_table,
    select_gangs,
    start_text,
    truncate,
    wrap_text,
)

DATA = Path(__file__).resolve().parents[3] / "data" / "scheduling" / "published_queue.json"
SNAPSHOT = parse_published(DATA.read_text())
T = SNAPSHOT["time"]


def _gang(**changes: Any) -> GangView:
    gang = {
        "gang": "ml/job",
        "api": "coscheduling",
        "state": "waiting",
        "queue": None,
        "priority": 0,
        "position": 1,
        "pods": 4,
        "gpus": 32,
        "since": T - 60,
        "expected_start": None,
        "expected_note": "",
        "promised": None,
        "reserved": None,
        "reason": "waits",
        "never_fits": False,
    }
    gang.update(changes)
    return cast("GangView", gang)


def _snapshot(gangs: list[GangView], omitted: int = 0) -> PublishedSnapshot:
    snapshot = copy.deepcopy(SNAPSHOT)
    snapshot["gangs"] = gangs
    snapshot["omitted"] = omitted
    return snapshot


def _row(lines: list[str], gang: str) -> dict[str, str]:
    """The cells of ``gang``'s row by header (columns split at the header's offsets)."""
    header = lines[0]
    names = header.split()
    starts = [header.index(f"{name}") for name in names]
    line = next(line for line in lines[1:] if f" {gang} " in line)
    ends = [*starts[1:], None]
    return {n: line[s:e].strip() for n, s, e in zip(names, starts, ends, strict=True)}


def test_durations_keep_the_two_largest_units() -> None:
    assert duration_text(0) == "0s"
    assert duration_text(45.9) == "45s"
    assert duration_text(252) == "4m12s"
    assert duration_text(2 * 3600 + 3 * 60 + 59) == "2h03m"
    assert duration_text(3 * 86400 + 4 * 3600) == "3d04h"
    assert duration_text(-5) == "0s"  # a clock behind the scheduler's


def test_start_text() -> None:
    now = T + 10
    assert start_text(_gang(state="running"), published=T, now=now) == "running"
    assert start_text(_gang(expected_start=None), published=T, now=now) == "unknown"
    assert start_text(_gang(expected_start=T), published=T, now=now) == "now"  # next pass
    assert start_text(_gang(expected_start=T + 5), published=T, now=now) == "now"  # overdue
    assert start_text(_gang(expected_start=T + 210), published=T, now=now) == "in 3m20s"
    never = _gang(never_fits=True, expected_start=T + 100)
    assert start_text(never, published=T, now=now) == "-"


def test_truncate_marks_the_cut_with_an_ellipsis() -> None:
    assert truncate("abcdef", 6) == "abcdef"
    assert truncate("abcdef", 4) == "abc" + ELLIPSIS
    assert truncate("abcdef", 1) == ELLIPSIS
    assert truncate("abcdef", 0) == ""


def test_wrap_breaks_after_spaces_and_cuts_only_long_words() -> None:
    assert wrap_text("", 5) == [""]
    assert wrap_text("aaa bbb ccc", 8) == ["aaa bbb ", "ccc"]
    assert wrap_text("aaa bbb ccc", 7) == ["aaa ", "bbb ccc"]
    assert wrap_text("aaa bbb ccc", 6) == ["aaa ", "bbb ", "ccc"]
    assert wrap_text("abcdefghij k", 4) == ["abcd", "efgh", "ij k"]
    assert "".join(wrap_text("waits for 64 GPUs of ml/bert", 7)) == "waits for 64 GPUs of ml/bert"


def test_the_published_example_at_160_columns() -> None:
    lines = queue_table(SNAPSHOT, now=T + 2, width=160)
    assert lines[0].split() == [
        "QUEUE",
        "PRIORITY",
        "POS",
        "GANG",
        "STATE",
        "PODS",
        "GPUS",
        "WAITED",
        "START",
        "RESERVED",
        "REASON",
    ]
    assert len(lines) == 1 + len(SNAPSHOT["gangs"])
    assert all(len(line) <= 160 for line in lines)
    first = _row(lines, "ml/llama3-70b-pretrain")
    assert first["POS"] == "1"
    assert first["WAITED"] == "4m14s"
    assert first["START"] == "in 3m18s"
    assert first["RESERVED"] == "z0-s1"
    assert first["REASON"].endswith(ELLIPSIS)
    assert _row(lines, "ml/mixtral-finetune")["START"] == "unknown"
    assert _row(lines, "team-b/eval-nightly")["START"] == "now"
    running = _row(lines, "ml/bert-sweep-3")
    assert (running["POS"], running["WAITED"], running["START"]) == ("-", "-", "running")
    assert running["REASON"] == ""


def test_a_gang_that_never_fits_has_no_place_and_no_reservation() -> None:
    # Even were the scheduler to send them, a gang that cannot fit shows neither.
    never = _gang(gang="vision/giant", never_fits=True, position=7, reserved="z0", reason="no")
    lines = queue_table(_snapshot([never]), now=T, width=120)
    row = _row(lines, "vision/giant")
    assert (row["POS"], row["START"], row["RESERVED"], row["REASON"]) == ("-", "-", "-", "no")


def test_the_queue_column_only_with_queues() -> None:
    lines = queue_table(_snapshot([_gang()]), now=T, width=120)
    assert lines[0].split()[0] == "PRIORITY"
    lines = queue_table(_snapshot([_gang(queue="research")]), now=T, width=120)
    assert lines[0].split()[0] == "QUEUE"


def test_wide_adds_the_api_the_promise_the_run_time_and_why_unknown() -> None:
    lines = queue_table(SNAPSHOT, now=T + 2, width=1000, wide=True)
    assert lines[0].split()[-4:] == ["API", "PROMISED", "RUNNING", "REASON"]
    assert _row(lines, "ml/llama3-70b-pretrain")["PROMISED"] == "in 2m18s"
    assert _row(lines, "ml/bert-sweep-3")["RUNNING"] == "10m02s"
    assert _row(lines, "ml/mixtral-finetune")["REASON"].endswith(
        "; start unknown: the gangs it waits for declare no run-time bound"
    )


def test_omitted_gangs_are_counted_under_the_table() -> None:
    lines = queue_table(_snapshot([_gang()], omitted=12), now=T, width=120)
    assert lines[-1] == "(and 12 more gangs the scheduler left out of its view)"


def test_the_reason_keeps_a_minimum_when_the_other_columns_are_too_wide() -> None:
    long_name = "ns/" + "x" * 150
    lines = queue_table(_snapshot([_gang(gang=long_name, reason="r" * 50)]), now=T, width=80)
    assert lines[1].endswith("r" * (MIN_FLEX - 1) + ELLIPSIS)


def test_select_gangs_by_queue_and_state() -> None:
    gangs = SNAPSHOT["gangs"]
    assert [g["gang"] for g in select_gangs(gangs, queue="prod")] == [
        "team-b/eval-nightly",
        "team-b/serve-canary",
    ]
    assert [g["gang"] for g in select_gangs(gangs, queue="prod", state="running")] == [
        "team-b/serve-canary"
    ]
    assert len(select_gangs(gangs)) == len(gangs)


def test_line_breaks_in_a_cell_do_not_break_the_table() -> None:
    lines = flex_table(["A", "B"], [["x\ny", "one\ntwo"]], 40)
    assert lines == ["A    B", "x y  one two"]


def test_rows_must_match_the_headers() -> None:
    with pytest.raises(ValueError, match=r"rows\[0\]: 1 cells for 2 columns"):
        flex_table(["A", "B"], [["x"]], 40)


# -- properties ---------------------------------------------------------------------------

_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")),
    max_size=200,
)
_NAMES = st.from_regex(r"[a-z0-9-]{1,30}/[a-z0-9-]{1,40}", fullmatch=True)


@st.composite
def _gangs(draw: st.DrawFn) -> list[GangView]:
    count = draw(st.integers(0, 8))
    gangs = []
    for index in range(count):
        running = draw(st.booleans())
        gangs.append(
            _gang(
                gang=draw(_NAMES),
                state="running" if running else "waiting",
                queue=draw(st.none() | st.sampled_from(["research", "prod", "a-long-queue"])),
                priority=draw(st.integers(-(2**31), 2**31)),
                position=None if running else index + 1,
                pods=draw(st.integers(1, 10_000)),
                gpus=draw(st.integers(0, 100_000)),
                since=T - draw(st.floats(0, 10**7)),
                expected_start=draw(st.none() | st.floats(T - 100, T + 10**6)),
                reserved=draw(st.none() | st.from_regex(r"[a-z0-9-]{1,20}", fullmatch=True)),
                reason="" if running else draw(_TEXT),
                never_fits=draw(st.booleans()),
            )
        )
    return gangs


def _fixed(lines: list[str]) -> int:
    """The width of every column but REASON (its offset in the header)."""
    return lines[0].index("REASON")


@settings(max_examples=150, deadline=None)
@given(gangs=_gangs(), extra=st.integers(MIN_FLEX, 120), wide=st.booleans())
def test_truncated_rows_fit_the_width_one_line_per_gang(
    gangs: list[GangView], extra: int, wide: bool
) -> None:
    snapshot = _snapshot(gangs)
    fixed = _fixed(queue_table(snapshot, now=T, width=10**4, wide=wide))
    width = fixed + extra
    lines = queue_table(snapshot, now=T, width=width, wide=wide)
    assert all(len(line) <= width for line in lines)
    assert len(lines) == 1 + len(gangs)
    for gang, line in zip(gangs, lines[1:], strict=True):
        assert f" {gang['gang']} " in line


@settings(max_examples=150, deadline=None)
@given(gangs=_gangs(), extra=st.integers(MIN_FLEX, 120))
def test_wrapped_rows_fit_the_width_and_keep_every_character(
    gangs: list[GangView], extra: int
) -> None:
    snapshot = _snapshot(gangs)
    fixed = _fixed(queue_table(snapshot, now=T, width=10**4))
    width = fixed + extra
    lines = queue_table(snapshot, now=T, width=width, wrap=True)
    assert all(len(line) <= width for line in lines)
    # Each gang's row, then its continuation lines (blank up to REASON): the REASON parts of
    # a row and its continuations join back into the reason.
    reasons: list[str] = []
    for line in lines[1:]:
        if line[:fixed].strip():
            reasons.append(line[fixed:])
        else:
            reasons[-1] += line[fixed:]
    assert reasons == [g["reason"] for g in gangs]
