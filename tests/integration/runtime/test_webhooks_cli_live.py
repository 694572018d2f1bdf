"""``crdkit run --webhook-port --webhook-install`` as a process: the hello example's validator
and defaulter, on the real apiserver, until SIGTERM ends the process cleanly."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest
from _live import run_args
from _runtime_support import HELLO_CRD
from _webhook_support import delete_configurations
from examples.hello.operator import Hello, HelloSpec

from crdkit.client import ApiError, Client
from crdkit.resources import ObjectMeta
from crdkit.testing import ControlPlane, eventually
from crdkit.testing.envtest.processes import free_ports

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parents[3]


def _hello(namespace: str, name: str, **spec: str) -> Hello:
    return Hello(metadata=ObjectMeta(name=name, namespace=namespace), spec=HelloSpec(**spec))


async def _run_hello_webhooks(
    control_plane: ControlPlane, namespace: str, *more: str
) -> asyncio.subprocess.Process:
    """``crdkit run`` of the hello webhooks on a free webhook port, its stderr piped."""
    python_path = os.pathsep.join([str(ROOT / "python"), str(ROOT)])
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from crdkit.cli import main; main()",
        *run_args(
            "examples.hello.webhooks:HelloWebhookReconciler",
            control_plane.kubeconfig_path,
            namespace,
            "--webhook-port",
            str(free_ports(1)[0]),
            *more,
        ),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": python_path},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )


async def test_crdkit_run_serves_and_installs_the_webhooks(
    control_plane: ControlPlane, crdkit_client: Client, namespace: str
) -> None:
    await control_plane.install_crds([HELLO_CRD])
    name = f"hello-cli-{namespace}"[:63]
    process = await _run_hello_webhooks(control_plane, namespace, "--webhook-install", name)
    try:

        async def refused() -> bool:
            assert process.returncode is None, "crdkit run exited"
            try:  # a new name each time: one admitted before the webhook was active stays
                await crdkit_client.create(
                    _hello(namespace, f"n{os.urandom(3).hex()}", target="nobody")
                )
            except ApiError as error:
                return "spec.target: greet somebody" in str(error)
            return False

        await eventually(refused, what="the validator called by the apiserver")

        async def defaulted() -> bool:
            hello = await crdkit_client.create(
                _hello(namespace, f"w{os.urandom(3).hex()}", greeting="hi", target="you")
            )
            return hello.spec.greeting == "Hi"

        await eventually(defaulted, what="the defaulter called by the apiserver")
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(process.communicate(), 60)
        await delete_configurations(crdkit_client, name)
    assert process.returncode == 0, stderr.decode()[-2000:]
    # --event-loop auto (the default) keeps a process that serves webhooks on asyncio's loop.
    assert "event loop: asyncio" in stderr.decode()


@pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("uvloop") is None, reason="uvloop not installed"
)
async def test_crdkit_run_refuses_uvloop_with_webhooks_in_one_line(
    control_plane: ControlPlane, namespace: str
) -> None:
    process = await _run_hello_webhooks(control_plane, namespace, "--event-loop", "uvloop")
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2
    assert "--event-loop uvloop: the webhook server needs asyncio's own loop" in err.decode()
