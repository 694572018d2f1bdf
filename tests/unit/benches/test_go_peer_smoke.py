"""Smoke tests of benches/go_peer.py: building a Go peer of the benches and asking its version,
with shell scripts standing in for build.sh and for the binary."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from _benches import load_bench


@pytest.fixture(scope="module")
def go_peer() -> ModuleType:
    return load_bench("go_peer")


def test_a_failed_build_is_an_error_not_a_crash(go_peer: ModuleType, tmp_path: Path) -> None:
    script = tmp_path / "build.sh"
    script.write_text("echo 'controller_runtime_peer: go build failed' >&2\nexit 2\n")
    binary, error = go_peer.build(script, "controller-runtime")
    assert binary is None
    assert error.startswith("building the controller-runtime peer failed (exit 2)")
    assert "go build failed" in error


def test_a_build_must_print_an_existing_binary(go_peer: ModuleType, tmp_path: Path) -> None:
    script = tmp_path / "build.sh"
    script.write_text(f"echo {tmp_path / 'absent'}\n")
    binary, error = go_peer.build(script, "controller-runtime")
    assert binary is None
    assert "exit 0" in error
    made = tmp_path / "peer"
    made.write_text("")
    script.write_text(f"echo building >&2\necho noise\necho {made}\n")
    assert go_peer.build(script, "controller-runtime") == (made, None)


def test_version_info(go_peer: ModuleType, tmp_path: Path) -> None:
    binary = tmp_path / "peer"
    answer = {"controller_runtime": "v0.25.2", "client_go": "v0.37.2", "go": "go1.26.8"}
    binary.write_text(f"#!/bin/sh\necho '{json.dumps(answer)}'\n")
    binary.chmod(0o755)
    assert go_peer.version_info(binary) == {"binary": str(binary), **answer}
    binary.write_text("#!/bin/sh\nexit 1\n")
    assert "error" in go_peer.version_info(binary)
    assert "error" in go_peer.version_info(tmp_path / "absent")
