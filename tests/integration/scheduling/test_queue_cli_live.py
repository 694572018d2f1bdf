"""``crdkit queue`` as a process against a real apiserver: the view a scheduler publishes (a
ConfigMap made here from the test view, its times moved to now) read as a table, as JSON and
with --watch; a ServiceAccount holding only the role ``crdkit gen-rbac`` writes for
`QueueReader` reads it, one without that role is told which role it lacks."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from _cluster import new_pool
from _live import apply_all, gen_rbac

import crdkit
from crdkit.client import Client, ClientConfig
from crdkit.client.errors import Forbidden, NotFound
from crdkit.resources import ConfigMap, ObjectMeta
from crdkit.scheduling.view.format import PUBLISHED_KEY, published_name
from crdkit.testing import ControlPlane
from crdkit.testing.envtest.users import service_account_token, token_kubeconfig

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(120)]

DATA = Path(__file__).resolve().parents[2] / "data" / "scheduling" / "published_queue.json"
SCHEDULER = "sched-queue-test"
# The crdkit the test imports (this worktree's, not another installed one) for the process.
PYTHONPATH = os.pathsep.join(
    [str(Path(crdkit.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
)
COMMAND = [sys.executable, "-c", "from crdkit.cli import main; main()", "queue"]


def _view_now(**changes: Any) -> dict[str, Any]:
    """The test view with every time moved so that it was published just now."""
    view: dict[str, Any] = json.loads(DATA.read_text())
    shift = time.time() - view["time"]
    view["time"] += shift
    for gang in view["gangs"]:
        for key in ("since", "expected_start", "promised"):
            if gang[key] is not None:
                gang[key] += shift
    for start in view["starts"]:
        start["promised"] += shift
        start["actual"] += shift
    view.update(changes)
    return view


async def _publish(client: Client, namespace: str, view: dict[str, Any]) -> None:
    name = published_name(SCHEDULER)
    config_map = ConfigMap(
        metadata=ObjectMeta(name=name, namespace=namespace),
        data={PUBLISHED_KEY: json.dumps(view)},
    )
    try:
        current = await client.get(ConfigMap, name, namespace=namespace)
    except NotFound:
        await client.create(config_map)
        return
    current.data = config_map.data
    await client.replace(current)


async def _queue(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        *COMMAND,
        *args,
        env={**os.environ, "PYTHONPATH": PYTHONPATH},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@contextlib.asynccontextmanager
async def _watching(*args: str) -> AsyncIterator[asyncio.subprocess.Process]:
    process = await asyncio.create_subprocess_exec(
        *COMMAND,
        *args,
        env={**os.environ, "PYTHONPATH": PYTHONPATH},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.fixture
async def published(scheduling_plane: ControlPlane) -> AsyncIterator[tuple[Client, str]]:
    namespace = new_pool()
    async with Client.from_control_plane(scheduling_plane) as admin:
        await scheduling_plane.create_namespace(namespace)
        await _publish(admin, namespace, _view_now())
        yield admin, namespace


async def test_the_table_and_json_through_the_apiserver(
    scheduling_plane: ControlPlane, published: tuple[Client, str]
) -> None:
    _, namespace = published
    admin = str(scheduling_plane.kubeconfig_path)
    base = ["--kubeconfig", admin, "--scheduler", SCHEDULER, "-n", namespace]
    status, out, err = await _queue(*base, "--width", "120")
    assert status == 0, err
    lines = out.splitlines()
    assert len(lines) == 7, out
    assert all(len(line) <= 120 for line in lines)
    first = lines[1].split()
    assert first[:4] == ["research", "100", "1", "ml/llama3-70b-pretrain"]
    assert "in" in first  # its START: "in 3m2Xs", promised in the future
    assert err == ""  # a fresh view: no note that it is stale

    status, out, err = await _queue(*base, "-o", "json", "--state", "running")
    assert status == 0, err
    view = json.loads(out)
    assert list(view) == ["scheduler", "time", "gangs", "queues", "omitted"]
    assert [g["gang"] for g in view["gangs"]] == ["ml/bert-sweep-3", "team-b/serve-canary"]

    status, out, err = await _queue("--kubeconfig", admin, "--scheduler", "nobody", "-n", namespace)
    assert status == 1
    assert err.startswith(
        f"crdkit queue: no view published by scheduler nobody in namespace {namespace}"
    )
    assert "`crdkit scheduler --name nobody` running" in err


async def test_a_reader_with_the_generated_role_reads_and_one_without_is_told_the_role(
    scheduling_plane: ControlPlane, published: tuple[Client, str], tmp_path: Path
) -> None:
    admin, namespace = published
    documents = gen_rbac(
        "crdkit.scheduling.view.queue_cli:QueueReader",
        "--namespace",
        namespace,
        "--name",
        "queue-reader",
        "--service-account",
        "reader",
        "--service-account-namespace",
        namespace,
    )
    assert [d["kind"] for d in documents] == ["Role", "RoleBinding"]
    token = await service_account_token(admin, namespace, "reader")
    await apply_all(admin, documents)
    reader = token_kubeconfig(
        tmp_path / "reader", scheduling_plane, token, user="reader", namespace=namespace
    )
    # No -n: the reader's kubeconfig context names the namespace.
    for _ in range(50):  # the authorizer's cache sees the new binding within moments
        status, out, err = await _queue("--kubeconfig", str(reader), "--scheduler", SCHEDULER)
        if "not allowed" not in err:
            break
        await asyncio.sleep(0.2)
    assert status == 0, err
    assert "ml/llama3-70b-pretrain" in out

    # The role is exactly the read of configmaps: the reader may not change the view.
    async with Client(await ClientConfig.from_kubeconfig(reader)) as as_reader:
        with pytest.raises(Forbidden):
            await _publish(as_reader, namespace, _view_now())

    other = await service_account_token(admin, namespace, "stranger")
    stranger = token_kubeconfig(
        tmp_path / "stranger", scheduling_plane, other, user="stranger", namespace=namespace
    )
    status, _, err = await _queue("--kubeconfig", str(stranger), "--scheduler", SCHEDULER)
    assert status == 1
    assert "not allowed to read ConfigMap" in err
    assert (
        f"crdkit gen-rbac crdkit.scheduling.view.queue_cli:QueueReader --namespace {namespace}"
        in err
    )


async def test_watch_prints_each_new_view_until_interrupted(
    scheduling_plane: ControlPlane, published: tuple[Client, str]
) -> None:
    admin, namespace = published
    args = ["--kubeconfig", str(scheduling_plane.kubeconfig_path), "--scheduler", SCHEDULER]
    async with _watching(*args, "-n", namespace, "-w", "-o", "json") as process:
        assert process.stdout is not None
        first = json.loads(await asyncio.wait_for(process.stdout.readline(), 30))
        assert len(first["gangs"]) == 6
        fewer = _view_now(seq=43)
        fewer["gangs"] = fewer["gangs"][:2]
        await _publish(admin, namespace, fewer)
        second = json.loads(await asyncio.wait_for(process.stdout.readline(), 30))
        assert [g["gang"] for g in second["gangs"]] == [
            "ml/llama3-70b-pretrain",
            "ml/mixtral-finetune",
        ]
        process.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(process.wait(), 30) == 0
