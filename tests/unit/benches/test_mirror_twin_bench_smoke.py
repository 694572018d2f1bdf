"""Smoke test of benches/mirror_twin_bench.py: one small size; every figure is there and
positive."""

from __future__ import annotations

import pytest
from _benches import bench_json


def test_a_small_size_reports_every_figure(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["--nodes", "64", "--repeat", "1"]
    (size,) = bench_json("mirror_twin_bench", args, monkeypatch, capsys)["sizes"]
    assert size["nodes"] == 64
    assert size["build_ms"] > 0
    assert size["place_on_twin_ms"] > 0
    assert set(size["node_event_us"]) == {"without_twin", "with_twin"}
