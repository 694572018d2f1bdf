"""The pytest plugin: its fixtures, and no process left once a session ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client import ApiClient

from crdkit.testing import ControlPlane, find_binaries

pytestmark = pytest.mark.integration


async def test_namespace_fixture_makes_a_fresh_namespace(
    control_plane: ControlPlane, k8s_api_client: ApiClient, namespace: str
) -> None:
    assert namespace.startswith("test-namespace-fixture-makes-a-fresh")
    assert len(namespace) <= 63
    ns = await client.CoreV1Api(k8s_api_client).read_namespace(namespace)
    assert ns.metadata.name == namespace


async def test_the_session_shares_one_control_plane(
    control_plane: ControlPlane, k8s_api_client: ApiClient
) -> None:
    assert control_plane.started
    host = k8s_api_client.configuration.host
    assert host == control_plane.server_url


INNER_TESTS = """
import json
import os

from kubernetes_asyncio import client


async def test_record(control_plane, namespace, k8s_api_client):
    await client.CoreV1Api(k8s_api_client).read_namespace(namespace)
    with open(os.environ["CRDKIT_TEST_RECORD"], "w") as record:
        json.dump({"pids": control_plane.pids, "workdir": str(control_plane.workdir)}, record)


async def test_failing(control_plane):
    assert control_plane.started
    raise AssertionError("a failing test must not leave the control plane behind")
"""

INNER_INI = """
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
filterwarnings = error
"""


def _running(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline:
            found.append(int(entry.name))
    return found


def test_no_etcd_or_apiserver_outlives_a_session(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(INNER_TESTS))
    (tmp_path / "pytest.ini").write_text(INNER_INI)
    record = tmp_path / "record.json"
    assets = find_binaries().kube_apiserver.parent
    env = {**os.environ, "CRDKIT_TEST_RECORD": str(record), "KUBEBUILDER_ASSETS": str(assets)}
    inner = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_inner.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert inner.returncode == 1, inner.stdout + inner.stderr  # exactly the failing test
    assert "1 failed, 1 passed" in inner.stdout, inner.stdout

    recorded = json.loads(record.read_text())
    assert set(recorded["pids"]) == {"etcd", "kube-apiserver"}
    for name, pid in recorded["pids"].items():
        assert not _running(pid), f"{name} (pid {pid}) outlived the session"
    assert not Path(recorded["workdir"]).exists()
    assert _processes_mentioning(recorded["workdir"]) == []


STRICT_TESTS = """
from crdkit.client import Client
from crdkit.resources import ConfigMap


async def test_as_the_readme_writes_it(crdkit_client: Client, namespace: str) -> None:
    page = await crdkit_client.list(ConfigMap, namespace=namespace)
    assert isinstance(page.items, list)


async def test_without_crdkit_fixtures_is_left_to_pytest_asyncio() -> None:
    pass
"""


def test_a_fresh_projects_strict_mode_runs_tests_that_use_crdkits_fixtures(
    tmp_path: Path,
) -> None:
    # No asyncio_mode: pytest-asyncio's default, strict, where an unmarked async test is not
    # run. The README's examples carry no mark; the plugin marks those that use its fixtures.
    (tmp_path / "test_strict.py").write_text(textwrap.dedent(STRICT_TESTS))
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
    )
    assets = find_binaries().kube_apiserver.parent
    inner = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA", "test_strict.py"],
        cwd=tmp_path,
        env={**os.environ, "KUBEBUILDER_ASSETS": str(assets)},
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    output = inner.stdout + inner.stderr
    assert "PASSED test_strict.py::test_as_the_readme_writes_it" in output, output
    # An async test that uses none of crdkit's fixtures is pytest-asyncio's to judge.
    assert "FAILED test_strict.py::test_without_crdkit_fixtures_is_left_to_pytest_asyncio" in output
