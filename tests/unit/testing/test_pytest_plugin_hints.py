"""The plugin's hint when a wider fixture asks for a per-test crdkit fixture."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SESSION_FIXTURE = """
import pytest_asyncio

@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def shared({fixture}):
    return {fixture}

async def test_uses_it(shared):
    pass
"""


def run_pytest(folder: Path, fixture: str) -> str:
    (folder / "test_hint.py").write_text(SESSION_FIXTURE.format(fixture=fixture))
    (folder / "pytest.ini").write_text("[pytest]\nasyncio_mode = auto\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(folder)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0, result.stdout
    return result.stdout


@pytest.mark.parametrize("fixture", ["crdkit_client", "namespace"])
def test_a_session_fixture_on_a_per_test_one_gets_the_way_out(tmp_path: Path, fixture: str) -> None:
    out = run_pytest(tmp_path, fixture)
    assert "ScopeMismatch" in out
    assert f"crdkit: {fixture} is made anew for every test" in out
    assert 'loop_scope="session"' in out
    assert "Client.from_control_plane(control_plane)" in out
