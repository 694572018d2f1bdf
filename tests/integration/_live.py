"""Helpers of the live tests in several folders (runtime, deploy, scheduling), imported by
module name: the hello operator's Hello, `crdkit gen-rbac`'s documents, and the `crdkit`
command run as a process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from examples.hello.operator import Hello, HelloSpec

from crdkit.cli import main
from crdkit.client import Client, GroupVersionKind
from crdkit.resources import ObjectMeta

ROOT = Path(__file__).resolve().parents[2]


@contextlib.asynccontextmanager
async def crdkit_process(log: Path, *args: str) -> AsyncIterator[asyncio.subprocess.Process]:
    """``crdkit ARGS...`` as a process in the repository root (on its PYTHONPATH, for the
    examples), its stderr written to ``log``; sent SIGTERM and waited for (60 s) at the end of
    the block unless it has exited."""
    with log.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).with_name("crdkit")),
            *args,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=asyncio.subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            yield process
        finally:
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
                await asyncio.wait_for(process.wait(), 60)


def run_args(target: str, kubeconfig: str | Path, namespace: str, *more: str) -> list[str]:
    """``crdkit run TARGET`` on ``namespace`` with no metrics or probe port, then ``more``."""
    return [
        "run",
        target,
        "--kubeconfig",
        str(kubeconfig),
        "--namespace",
        namespace,
        "--metrics-bind-address",
        "0",
        "--health-probe-bind-address",
        "0",
        *more,
    ]


def gen_rbac(target: str, *args: str) -> list[dict[str, Any]]:
    """The documents ``crdkit gen-rbac TARGET ARGS...`` prints."""
    result = CliRunner().invoke(main, ["gen-rbac", target, *args])
    assert result.exit_code == 0, result.output
    return list(yaml.safe_load_all(result.output))


async def apply_all(client: Client, documents: list[dict[str, Any]]) -> None:
    for document in documents:
        await client.create(document)


async def delete_cluster_wide(client: Client, documents: list[dict[str, Any]]) -> None:
    # Roles go with their namespace; cluster-wide ones would outlive the test.
    for document in documents:
        if document["kind"] in ("ClusterRole", "ClusterRoleBinding"):
            await client.delete(GroupVersionKind.of(document), document["metadata"]["name"])


async def create_hello(client: Client, namespace: str, target: str) -> Hello:
    """Creates the Hello ``world`` in ``namespace``, greeting ``target``."""
    return await client.create(
        Hello(metadata=ObjectMeta(name="world", namespace=namespace), spec=HelloSpec(target=target))
    )
