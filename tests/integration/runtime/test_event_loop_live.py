"""``crdkit run`` on uvloop as a process, asked for (``--event-loop uvloop``) or picked by the
default (``auto``, uvloop being installed): the hello operator reconciles against the real
apiserver and ends cleanly on SIGTERM."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from _live import crdkit_process, create_hello, run_args
from _runtime_support import HELLO_CRD

from _hello import hello_greeted
from crdkit.client import Client
from crdkit.testing import ControlPlane, eventually

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(180),
    pytest.mark.skipif(importlib.util.find_spec("uvloop") is None, reason="needs crdkit[fast]"),
]


@pytest.mark.parametrize("choice", [("--event-loop", "uvloop"), ()], ids=["asked", "auto"])
async def test_the_hello_operator_reconciles_on_uvloop(
    control_plane: ControlPlane,
    crdkit_client: Client,
    namespace: str,
    tmp_path: Path,
    choice: tuple[str, ...],
) -> None:
    await control_plane.install_crds([HELLO_CRD])
    log = tmp_path / "operator.log"
    args = run_args(
        "examples.hello.operator:HelloReconciler",
        control_plane.kubeconfig_path,
        namespace,
        *choice,
    )
    async with crdkit_process(log, *args) as process:
        await create_hello(crdkit_client, namespace, "uvloop")
        await eventually(
            lambda: hello_greeted(crdkit_client, namespace, "Hello, uvloop!"),
            what="the greeting made by the operator on uvloop",
        )
        assert process.returncode is None
    assert process.returncode == 0, log.read_text()
    assert "event loop: uvloop" in log.read_text()
