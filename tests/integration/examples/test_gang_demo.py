"""`make demo` end to end: its own control plane, the stream, the table, the picture."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(300)]

ROOT = Path(__file__).parents[3]


def test_demo_runs_the_stream_and_draws_the_picture(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            *(sys.executable, "-m", "examples.demo", "--out", str(tmp_path), "--timeout", "120"),
            *("--ui", "--ui-address", "127.0.0.1:0", "--keep-ui", "1"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=280,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        },
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    assert "registered 128 simulated nodes" in out
    assert "llama3-8b-finetune: Running (16 pods bound, domain tier 1 " in out
    assert "mixtral-8x7b-pretrain: Completed" in out
    # A job is reported Running only together with where it was placed.
    running = [line for line in out.splitlines() if ": Running (" in line]
    assert running
    assert all("domain tier " in line for line in running), running
    table = out[out.index("JOB ") :]
    never = next(line for line in table.splitlines() if line.startswith("gpt-neox-20b"))
    assert "Pending" in never
    # Into a pipe, each row is one line cut at 160 columns; the reason says only why.
    assert "never fits this cluster, even with every node empty" in never
    assert all(len(line) <= 160 for line in table.splitlines()[:20])
    # The page's address, at the start and again while it stays up after the stream.
    page = next(line for line in out.splitlines() if "the scheduler's live page: " in line)
    url = page.rsplit(" ", 1)[1]
    assert url.startswith("http://127.0.0.1:")
    assert url.endswith("/ui/")
    assert f"the page stays up 1 s: {url}" in out
    picture = tmp_path / "topology.png"
    assert f"topology picture: {picture.resolve()}" in out
    with Image.open(picture) as image:
        assert image.format == "PNG"
        assert image.width > 1000
    assert out.rstrip().endswith("everything stopped")
