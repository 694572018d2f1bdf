"""aiohttp is the ``testing`` extra's: without it the fault proxies say what to install, and
the rest of the test kit (the control plane, the fake cluster) still imports.

Each check runs in a fresh interpreter where ``import aiohttp`` fails, as it does where the
extra is not installed.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

NO_AIOHTTP = "import sys\nsys.modules['aiohttp'] = None  # what an absent package looks like\n"


def _run(statement: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", NO_AIOHTTP + statement],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "statement",
    [
        "import crdkit.testing.faults",
        "from crdkit.testing.faults import TcpFaultProxy",
        "from crdkit.testing import HttpFaultProxy",
    ],
)
def test_the_fault_proxies_name_the_extra(statement: str) -> None:
    probe = (
        "try:\n"
        f"    {statement}\n"
        "except ImportError as error:\n"
        "    print(type(error).__name__, error.name, error)\n"
        "else:\n"
        "    print('imported')\n"
    )
    result = _run(probe)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ImportError aiohttp "), result.stdout
    assert "pip install 'crdkit[testing]'" in result.stdout


def test_the_rest_of_the_kit_needs_no_aiohttp() -> None:
    result = _run(
        "import crdkit.testing.envtest.control_plane\n"
        "from crdkit.testing import ControlPlane, FakeCluster, eventually\n"
        "assert 'aiohttp' not in {m for m, v in sys.modules.items() if v is not None}\n"
    )
    assert result.returncode == 0, result.stderr


def test_with_aiohttp_the_proxies_import() -> None:
    result = subprocess.run(
        [sys.executable, "-c", "from crdkit.testing.faults import HttpFaultProxy"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


def test_aiohttp_is_declared_by_the_testing_extra_alone() -> None:
    import tomllib
    from pathlib import Path

    pyproject = Path(__file__).resolve().parents[4] / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text())["project"]
    extras = project["optional-dependencies"]
    assert not [d for d in project["dependencies"] if d.startswith("aiohttp")]
    assert [d for d in extras["testing"] if d.startswith("aiohttp")]
    assert "crdkit[testing]" in extras["dev"]
