"""Differential: pod_requests against kube-scheduler's own code.

tools/podrequests is k8s.io/component-helpers' PodRequests (the version pinned by its go.mod)
behind a one-pod-per-line loop; this test builds it (cached outside the clone) and asks it about
every pod hypothesis generates, so a disagreement shrinks to a minimal pod. Without a Go
toolchain the test is skipped; a build that fails is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pod_strategies import pods

from crdkit.scheduling.requests import pod_requests

# The first build downloads modules and compiles the API types: allow it minutes; afterwards
# the module takes seconds.
pytestmark = pytest.mark.timeout(900)

BUILD = Path(__file__).resolve().parents[3] / "tools" / "podrequests" / "build.sh"


def _go_present() -> bool:
    # The same search as tools/go-toolchain.sh: GO, then PATH, then /usr/local/go.
    return bool(os.environ.get("GO") or shutil.which("go") or Path("/usr/local/go/bin/go").exists())


class Reference:
    """The Go binary as a long-lived process: one JSON pod in, one JSON answer out."""

    def __init__(self, binary: str) -> None:
        self._process = subprocess.Popen(
            [binary],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

    def requests(self, pod: dict[str, Any]) -> dict[str, Any]:
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        self._process.stdin.write(json.dumps(pod) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        assert line, f"podrequests exited ({self._process.poll()})"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(timeout=10)
        assert self._process.stdout is not None
        self._process.stdout.close()


@pytest.fixture(scope="module")
def reference() -> Iterator[Reference]:
    if not _go_present():
        pytest.skip(
            "no Go toolchain (GO, go on PATH or /usr/local/go): cannot build tools/podrequests"
        )
    built = subprocess.run(["bash", str(BUILD)], capture_output=True, text=True, check=False)
    if built.returncode != 0:
        pytest.fail(f"tools/podrequests/build.sh failed (exit {built.returncode}):\n{built.stderr}")
    binary = built.stdout.strip().splitlines()[-1]
    go = Reference(binary)
    yield go
    go.close()


def test_the_reference_answers(reference: Reference) -> None:
    pod = {"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "1.5"}}}]}}
    assert reference.requests(pod) == {"cpu": 1500}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=pods())
def test_pod_requests_agree_with_component_helpers(
    reference: Reference, body: dict[str, Any]
) -> None:
    assert pod_requests(body) == reference.requests(body)


_sub_milli = st.one_of(
    st.integers(1, 5000).map(lambda n: f"{n}u"),
    st.integers(1, 5_000_000).map(lambda n: f"{n}n"),
    st.integers(1, 999).map(lambda n: f"0.{n:03d}5m"),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["cpu", "memory"]), _sub_milli), max_size=4))
def test_sub_milli_quantities_are_only_ever_overstated(
    reference: Reference, requests: list[dict[str, str]]
) -> None:
    # Upstream adds exact quantities and rounds the total up to a milli-unit; pod_requests
    # rounds each quantity first (see crdkit.scheduling.requests), so it may ask for a little
    # more than upstream, never for less.
    containers = [{"name": f"c{i}", "resources": {"requests": r}} for i, r in enumerate(requests)]
    body = {"spec": {"containers": containers}}
    ours, theirs = pod_requests(body), reference.requests(body)
    assert ours.keys() == theirs.keys()
    for name, value in ours.items():
        assert theirs[name] <= value <= theirs[name] + len(containers)
