"""Smoke test of benches/mirror_twin_bench.py: one small size; every figure is there and
positive."""

from __future__ import annotations

import json
import sys

import pytest
from _benches import load_bench


def test_a_small_size_reports_every_figure(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = load_bench("mirror_twin_bench")
    monkeypatch.setattr(sys, "argv", ["mirror_twin_bench", "--nodes", "64", "--repeat", "1"])
    module.main()
    (size,) = json.loads(capsys.readouterr().out)["sizes"]
    assert size["nodes"] == 64
    assert size["build_ms"] > 0
    assert size["place_on_twin_ms"] > 0
    assert set(size["node_event_us"]) == {"without_twin", "with_twin"}
