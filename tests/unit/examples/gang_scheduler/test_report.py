from __future__ import annotations

import pytest
from examples.gang_scheduler.job_stream import LLAMA3_8B_FINETUNE, manifest
from examples.gang_scheduler.models import Job
from examples.gang_scheduler.report import (
    JobRow,
    constraint_text,
    domain_text,
    format_table,
    progress_line,
    summary_table,
)


def test_table_columns_are_as_wide_as_their_widest_cell() -> None:
    text = format_table(("A", "LONGER"), [["xyz", "1"], ["", "22"]])
    assert text.splitlines() == ["A    LONGER", "---  ------", "xyz  1", "     22"]


def test_table_rows_must_match_the_headers() -> None:
    with pytest.raises(ValueError, match=r"rows\[0\]: 1 cells for 2 columns"):
        format_table(("A", "B"), [["x"]])


def _job(status: dict[str, object] | None = None, **spec: object) -> Job:
    data = manifest(LLAMA3_8B_FINETUNE)
    data["spec"].update(spec)
    if status is not None:
        data["status"] = status
    return Job.model_validate(data)


def test_constraint_and_domain_texts() -> None:
    assert constraint_text(_job()) == "hard tier 1"
    assert constraint_text(_job(networkTopology={"mode": "soft"})) == "soft"
    assert constraint_text(_job(networkTopology=None)) == "none"
    assert domain_text(_job()) == "-"
    placed = _job(
        {
            "placement": {
                "tier": 1,
                "domain": {"zone": "z0", "spine": "z0-s0", "leaf": "z0-s0-l0"},
                "domainName": "z0-s0-l0",
            }
        }
    )
    assert domain_text(placed) == "tier 1 z0-s0-l0"
    assert domain_text(_job({"placement": {"domain": {}}})) == "spans zones"


def test_summary_row_shows_the_reason_only_while_pending() -> None:
    condition = {
        "type": "Scheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "required leaf: the best leaf fits 16 of 32 pods",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    pending = JobRow(_job({"state": {"phase": "Pending"}, "conditions": [condition]}), 0, 0, None)
    assert pending.cells() == [
        "llama3-8b-finetune",
        "0/16",
        "0",
        "hard tier 1",
        "Pending",
        "-",
        "-",
        "required leaf: the best leaf fits 16 of 32 pods",
    ]
    running = JobRow(
        _job({"state": {"phase": "Running"}, "conditions": [condition]}), 128, 16, 1.25
    )
    assert running.cells()[4:] == ["Running", "-", "1.2s", ""]
    table = summary_table([pending, running])
    assert table.splitlines()[0].split() == [
        "JOB",
        "PODS",
        "GPUS",
        "TOPOLOGY",
        "PHASE",
        "DOMAIN",
        "WAITED",
        "REASON",
    ]


def test_progress_line_is_stamped() -> None:
    assert progress_line(3.14159, "hello") == "[   3.1s] hello"


def test_the_reason_fits_the_terminal_width() -> None:
    headers = ("JOB", "REASON")
    reason = "required leaf: the best leaf fits 16 of 32 pods; " * 6  # ~300 characters
    cut = format_table(headers, [["llama", reason]], 40, wrap=False).splitlines()
    assert all(len(line) <= 40 for line in cut)
    assert len(cut) == 3
    assert cut[2].endswith("…")
    wrapped = format_table(headers, [["llama", reason]], 40, wrap=True).splitlines()
    assert all(len(line) <= 40 for line in wrapped)
    # The continuation lines sit under REASON, and together they keep the whole reason.
    offset = wrapped[0].index("REASON")
    assert "".join(line[offset:] for line in wrapped[2:]) == reason


def test_the_summary_wraps_its_reason_at_the_width() -> None:
    condition = {
        "type": "Scheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "required leaf: the best leaf fits 16 of 32 pods " * 5,
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    pending = JobRow(_job({"state": {"phase": "Pending"}, "conditions": [condition]}), 0, 0, None)
    lines = summary_table([pending], 100).splitlines()
    assert len(lines) > 3
    assert all(len(line) <= 100 for line in lines)
