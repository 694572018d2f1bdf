"""A project from `crdkit init` passes its own `make test`, twice: the scaffold's Makefile makes
a fresh virtual environment, installs crdkit from a wheel of this clone into it (never this
clone's sources) and runs the project's unit tests and its test on a local control plane; the
second run skips what is done and passes again.

The wheel is the one `make wheel-check` built (``CRDKIT_WHEEL_DIR``, which `make pytest` sets);
run alone, the test builds one with maturin (about 20 s with a warm cargo cache, minutes
without). The project's other dependencies come from the package index, through pip's cache.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from crdkit.deploy.cli.init import init

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[3]
ASSETS = os.environ.get("KUBEBUILDER_ASSETS") or str(ROOT / ".envtest" / "bin")


@pytest.fixture(scope="module")
def crdkit_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("CRDKIT_WHEEL_DIR")
    if given:
        wheels = sorted(Path(given).glob("crdkit-*.whl"))
        assert len(wheels) == 1, f"CRDKIT_WHEEL_DIR={given} holds {wheels}, not one crdkit wheel"
        return wheels[0]
    out = tmp_path_factory.mktemp("wheel")
    env = {
        "CARGO_TARGET_DIR": str(Path.home() / ".cache" / "crdkit" / "cargo-target"),
        **os.environ,
    }
    maturin = Path(sys.executable).parent / "maturin"
    built = subprocess.run(
        [str(maturin), "build", "-q", "--release", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=780,
    )
    assert built.returncode == 0, built.stderr
    [wheel] = out.glob("crdkit-*.whl")
    return wheel


def project_env() -> dict[str, str]:
    """This process's environment without what would reach into this clone: its crdkit on
    PYTHONPATH, its venv, and the make that runs this suite."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PYTHONPATH", "VIRTUAL_ENV", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"}
        and not key.startswith("PYTEST_")
    }
    env["KUBEBUILDER_ASSETS"] = ASSETS
    return env


def make_test(project: Path, wheel: Path) -> str:
    """`make test` in ``project``, as a user runs it; its output (exit status 0 asserted)."""
    done = subprocess.run(
        ["make", "test", f"CRDKIT={wheel}", f"PYTHON={sys.executable}"],
        cwd=project,
        env=project_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=420,
    )
    assert done.returncode == 0, f"make test failed ({done.returncode}):\n{done.stdout[-6000:]}"
    return done.stdout


def test_a_new_project_passes_its_own_make_test_twice(tmp_path: Path, crdkit_wheel: Path) -> None:
    project = tmp_path / "web-shop"
    made = CliRunner().invoke(init, [str(project), "--kind", "ShopFront", "--group", "shop.test"])
    assert made.exit_code == 0, made.output

    first = make_test(project, crdkit_wheel)
    # All four of the project's tests ran (three on FakeCluster, one on the control plane):
    # none skipped, say for want of the control plane's binaries.
    assert re.search(r"=+ 4 passed in ", first), first[-3000:]
    located = subprocess.run(
        [str(project / ".venv" / "bin" / "python"), "-c", "import crdkit; print(crdkit.__file__)"],
        env=project_env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert Path(located.stdout.strip()).is_relative_to(project / ".venv"), located.stdout

    again = make_test(project, crdkit_wheel)
    assert "pip install" not in again, "the second run installed again"
    assert re.search(r"=+ 4 passed in ", again), again[-3000:]
