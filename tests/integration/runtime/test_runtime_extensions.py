"""The runtime's extension points on the real apiserver: a ``Watch`` whose async map reads the
cache, runnables (run, cancelled on stop, their failure ending ``run()``), gen-rbac's roles for
runnables checked against what the apiserver stored, and a role that cannot list Pods: a clear
warning from the informer, and ``crdkit run`` ending in one line."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from _gang_operator import PodReconciler
from _live import run_args
from _runtime_support import configmap, eventually, new_manager
from click.testing import CliRunner

from crdkit import Context, Manager, Reconciler, Runnable, Watch
from crdkit.cli import main
from crdkit.client import Client, GroupVersionKind
from crdkit.resources import ConfigMap, ObjectMeta, Pod, Secret
from crdkit.runtime import Request
from crdkit.testing import ControlPlane
from crdkit.testing.envtest.users import restricted_kubeconfig
from factories import pod

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[3]
GANG = Path(__file__).with_name("_gang_operator.py")


class SecretUsers(Reconciler[ConfigMap]):
    """Reconciles the ConfigMaps that name a Secret (``data.secret``) when that Secret changes:
    the map is async and reads the manager's cache, which ``setup`` kept."""

    name = "secret-users"
    watches = (Watch(Secret, "users_of"),)

    def __init__(self) -> None:
        self.cache: Any = None
        self.mapped: list[tuple[str, list[str]]] = []
        self.reconciled: list[str] = []

    def setup(self, manager: Manager) -> None:
        self.cache = manager.cache

    async def users_of(self, secret: Secret) -> list[Request]:
        namespace = secret.metadata.namespace
        configs = await self.cache.list(ConfigMap, namespace=namespace)
        users = [
            c.metadata.name for c in configs.items if c.data.get("secret") == secret.metadata.name
        ]
        self.mapped.append((secret.metadata.name or "", users))
        return [Request(namespace, name) for name in users]

    async def reconcile(self, ctx: Context, obj: ConfigMap) -> None:
        self.reconciled.append(obj.metadata.name or "")


async def test_a_watch_with_an_async_map_over_the_cache_triggers_a_reconcile(
    crdkit_client: Client, namespace: str
) -> None:
    user = configmap(namespace, "uses-s1")
    user.data = {"secret": "s1"}
    await crdkit_client.create(user)
    await crdkit_client.create(configmap(namespace, "bystander"))
    reconciler = SecretUsers()
    manager = new_manager(crdkit_client, namespace)
    manager.add(reconciler)
    task = asyncio.create_task(manager.run())
    try:
        await manager.wait_ready()
        await eventually(
            lambda: sorted(reconciler.reconciled) == ["bystander", "uses-s1"],
            what="the primary objects reconciled once",
        )
        await crdkit_client.create(
            Secret(metadata=ObjectMeta(name="s1", namespace=namespace), string_data={"k": "v"})
        )
        await eventually(
            lambda: reconciler.reconciled.count("uses-s1") == 2,
            what="the ConfigMap that names the Secret reconciled again",
        )
        assert reconciler.mapped == [("s1", ["uses-s1"])]
        assert reconciler.reconciled.count("bystander") == 1
    finally:
        manager.stop()
        await asyncio.wait_for(task, 60)


class ConfigCounter(Runnable):
    """Counts the ConfigMaps its own informer holds, then waits to be cancelled."""

    needs_leader = False

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.seen: int | None = None
        self.running = asyncio.Event()
        self.cancelled = False

    def setup(self, manager: Manager) -> None:
        self.informer = manager.informers.informer(ConfigMap, namespace=self.namespace)

    async def run(self, manager: Manager) -> None:
        assert self.informer.has_synced, "runnables start once the caches synced"
        self.seen = len(self.informer.store.list())
        self.running.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise


async def test_a_runnable_runs_on_synced_caches_and_is_cancelled_on_stop(
    crdkit_client: Client, namespace: str
) -> None:
    for name in ("a", "b"):
        await crdkit_client.create(configmap(namespace, name))
    manager = new_manager(crdkit_client, namespace)
    counter = ConfigCounter(namespace)
    manager.add_runnable(counter)  # no controller at all
    task = asyncio.create_task(manager.run())
    await manager.wait_ready()
    await asyncio.wait_for(counter.running.wait(), 60)
    assert counter.seen == 2
    manager.stop()
    await asyncio.wait_for(task, 60)
    assert counter.cancelled
    assert not counter.informer.running


class BindFailed(Exception):
    pass


async def test_a_failing_runnable_ends_run_with_its_exception(
    crdkit_client: Client, namespace: str
) -> None:
    manager = new_manager(crdkit_client, namespace)
    reconciler = SecretUsers()
    controller = manager.add(reconciler)
    error = BindFailed("the binder gave up")

    async def binder() -> None:
        raise error

    manager.add_runnable(binder)
    with pytest.raises(BindFailed) as raised:
        await asyncio.wait_for(manager.run(), 60)
    assert raised.value is error
    assert not controller.started, "the controllers were stopped"
    with pytest.raises(RuntimeError, match=r"run\(\) has ended: it is no longer ready"):
        await manager.wait_ready()


def gen_rbac(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["gen-rbac", *args])
    return result.exit_code, result.output


async def test_gen_rbac_for_runnables_and_check_against_the_stored_role(
    crdkit_client: Client, namespace: str, tmp_path: Path
) -> None:
    ref = f"{GANG}:GangReconciler"
    name = f"gang-{namespace}"
    code, out = gen_rbac(ref, "--name", name, "--leader-election-namespace", namespace)
    assert code == 0, out
    documents = list(yaml.safe_load_all(out))
    cluster_role = documents[0]
    assert {"apiGroups": [""], "resources": ["pods/binding"], "verbs": ["create"]} in cluster_role[
        "rules"
    ]
    # What the apiserver stored (defaults filled in, fields reordered) must still check ok.
    stored = []
    try:
        for document in documents:
            await crdkit_client.create(document)
            kind = GroupVersionKind.of(document)
            meta = document["metadata"]
            got = await crdkit_client.get(kind, meta["name"], namespace=meta.get("namespace"))
            stored.append(got)
        role_file = tmp_path / "stored.yaml"
        role_file.write_text(yaml.safe_dump_all(stored))
        code, out = gen_rbac(
            ref, "--name", name, "--leader-election-namespace", namespace, "--check", str(role_file)
        )
        assert code == 0, out
        assert out.startswith(f"ok: {role_file} grants everything")

        stored[0]["rules"] = [r for r in stored[0]["rules"] if r["resources"] != ["pods/binding"]]
        role_file.write_text(yaml.safe_dump_all(stored))
        code, out = gen_rbac(
            ref, "--name", name, "--leader-election-namespace", namespace, "--check", str(role_file)
        )
        assert (code, out.splitlines()) == (1, ['missing: pods/binding create (group "")'])
    finally:
        await crdkit_client.delete(GroupVersionKind.of(cluster_role), name)


GET_PODS_ONLY = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]


async def test_a_role_without_list_warns_clearly_and_crdkit_run_fails_in_one_line(
    control_plane: ControlPlane,
    crdkit_client: Client,
    namespace: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    kubeconfig = await restricted_kubeconfig(
        crdkit_client,
        control_plane,
        namespace,
        "no-list",
        rules=GET_PODS_ONLY,
        path=tmp_path / "kubeconfig",
    )
    await crdkit_client.create(pod(namespace=namespace, image="example.invalid/none"))
    async with await Client.from_kubeconfig(kubeconfig) as restricted:
        await restricted.get(Pod, "p", namespace=namespace)  # the user is real, and may get
        manager = new_manager(restricted, namespace)
        manager.add(PodReconciler())
        with caplog.at_level(logging.WARNING, logger="crdkit.runtime.informer"):
            task = asyncio.create_task(manager.run())
            try:
                await eventually(lambda: bool(_forbidden_warnings(caplog)), what="the 403 warning")
            finally:
                manager.stop()
                await asyncio.wait_for(task, 60)
    [warning, *_] = _forbidden_warnings(caplog)
    assert warning.startswith(
        f'informer Pod ns={namespace}: forbidden to list pods (group "") in namespace '
        f"{namespace}: 403 Forbidden: "
    )
    assert 'cannot list resource "pods"' in warning
    assert "check the operator's role (crdkit gen-rbac ... --check ROLE.yaml)" in warning

    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    done = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from crdkit.cli import main; main()",
        *run_args(f"{GANG}:PodReconciler", kubeconfig, namespace, "--cache-sync-timeout", "3"),
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(done.communicate(), 90)
    text = stderr.decode()
    assert done.returncode == 1, text
    assert "Traceback" not in text
    last = text.splitlines()[-1]
    assert last.startswith(
        f"crdkit run: caches did not sync within 3s: Pod ns={namespace} (last error: "
        "403 Forbidden: "
    ), last
    assert last.endswith("; check the operator's role (crdkit gen-rbac ... --check ROLE.yaml)")


def _pythonpath() -> str:
    # The crdkit under test (maybe a worktree's, ahead of an installed one) and the examples.
    import crdkit

    package_root = str(Path(crdkit.__file__).resolve().parents[1])
    return os.pathsep.join([package_root, str(ROOT)])


def _forbidden_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "crdkit.runtime.informer" and "forbidden to" in r.getMessage()
    ]
