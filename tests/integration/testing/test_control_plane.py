"""ControlPlane against the real kube-apiserver and etcd it starts."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client import ApiClient
from kubernetes_asyncio.client.exceptions import ApiException
from kubernetes_asyncio.config import new_client_from_config

from crdkit.testing import Binaries, ControlPlane, ControlPlaneError, crd_manifest
from crdkit.testing.envtest import control_plane as control_plane_module
from crdkit.testing.envtest import processes

pytestmark = pytest.mark.integration

GROUP, VERSION, PLURAL = "demo.crdkit.dev", "v1alpha1", "gadgets"


def _crd() -> dict[str, Any]:
    return crd_manifest(
        GROUP,
        "Gadget",
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {"size": {"type": "integer", "minimum": 1}},
                }
            },
        },
        version=VERSION,
    )


def _gadget(name: str, size: int) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Gadget",
        "metadata": {"name": name},
        "spec": {"size": size},
    }


def _process_gone(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_namespace_and_configmap(k8s_api_client: ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(k8s_api_client)
    ns = await core.read_namespace(namespace)
    assert ns.status.phase == "Active"
    body = {"metadata": {"name": "settings"}, "data": {"replicas": "3"}}
    await core.create_namespaced_config_map(namespace, body)
    stored = await core.read_namespaced_config_map("settings", namespace)
    assert stored.data == {"replicas": "3"}


async def test_crd_served_then_custom_resources_created_and_listed(
    control_plane: ControlPlane, k8s_api_client: ApiClient, namespace: str, tmp_path: Path
) -> None:
    manifest = tmp_path / "crd.yaml"
    manifest.write_text(yaml.safe_dump(_crd()))
    [stored] = await control_plane.install_crds([manifest])
    assert stored["metadata"]["name"] == f"{PLURAL}.{GROUP}"
    # Installing again (from an object this time) is a no-op, not a conflict.
    await control_plane.install_crds([_crd()])

    custom = client.CustomObjectsApi(k8s_api_client)
    for name, size in (("small", 1), ("large", 8)):
        await custom.create_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, _gadget(name, size)
        )
    listed = await custom.list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL)
    assert sorted((i["metadata"]["name"], i["spec"]["size"]) for i in listed["items"]) == [
        ("large", 8),
        ("small", 1),
    ]
    # The schema is enforced by the real apiserver.
    with pytest.raises(ApiException) as refused:
        await custom.create_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, _gadget("broken", 0)
        )
    assert refused.value.status == 422


async def test_watch_sees_added_modified_deleted(k8s_api_client: ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(k8s_api_client)
    listed = await core.list_namespaced_config_map(namespace)
    seen: list[tuple[str, str]] = []

    async def collect() -> None:
        async with watch.Watch() as stream:
            async for event in stream.stream(
                core.list_namespaced_config_map,
                namespace,
                resource_version=listed.metadata.resource_version,
                timeout_seconds=30,
            ):
                seen.append((event["type"], event["object"].metadata.name))
                if event["type"] == "DELETED":
                    return

    watcher = asyncio.create_task(collect())
    await core.create_namespaced_config_map(namespace, {"metadata": {"name": "w"}, "data": {}})
    await core.patch_namespaced_config_map("w", namespace, {"data": {"k": "v"}})
    await core.delete_namespaced_config_map("w", namespace)
    await asyncio.wait_for(watcher, 30)
    assert seen == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]


async def test_readyz_and_version_answer(control_plane: ControlPlane) -> None:
    async with await new_client_from_config(config_file=str(control_plane.kubeconfig_path)) as api:
        version = await client.VersionApi(api).get_code()
    assert version.git_version.startswith("v1.")
    assert int(version.minor.rstrip("+")) >= 33


async def _drain_watch(core: client.CoreV1Api, namespace: str, resource_version: str) -> None:
    async with watch.Watch() as stream:
        async for _ in stream.stream(
            core.list_namespaced_config_map,
            namespace,
            resource_version=resource_version,
            timeout_seconds=5,
        ):
            pass


# -- fault injection and lifecycle, each on a control plane of its own ----------------------


async def test_objects_survive_an_apiserver_restart() -> None:
    async with ControlPlane() as plane:
        await plane.create_namespace("keep")
        async with await new_client_from_config(config_file=str(plane.kubeconfig_path)) as api:
            core = client.CoreV1Api(api)
            await core.create_namespaced_config_map("keep", {"metadata": {"name": "kept"}})
        old_pid = plane.pids["kube-apiserver"]

        await plane.restart_apiserver()

        assert plane.pids["kube-apiserver"] != old_pid
        assert _process_gone(old_pid)
        async with await new_client_from_config(config_file=str(plane.kubeconfig_path)) as api:
            kept = await client.CoreV1Api(api).read_namespaced_config_map("kept", "keep")
        assert kept.metadata.name == "kept"


async def test_compaction_makes_old_resource_versions_gone() -> None:
    async with ControlPlane() as plane:
        await plane.create_namespace("old")
        async with await new_client_from_config(config_file=str(plane.kubeconfig_path)) as api:
            core = client.CoreV1Api(api)
            created = await core.create_namespaced_config_map("old", {"metadata": {"name": "c"}})
            old_rv = created.metadata.resource_version
            for n in range(3):
                await core.patch_namespaced_config_map("c", "old", {"data": {"n": str(n)}})

        revision = await plane.compact_etcd()
        assert revision > int(old_rv)

        async with await new_client_from_config(config_file=str(plane.kubeconfig_path)) as api:
            core = client.CoreV1Api(api)
            with pytest.raises(ApiException) as listed:
                await core.list_namespaced_config_map(
                    "old", resource_version=old_rv, resource_version_match="Exact"
                )
            assert listed.value.status == 410
            with pytest.raises(ApiException) as watched:
                await _drain_watch(core, "old", old_rv)
            assert watched.value.status == 410
            # The current state is still there.
            assert (await core.read_namespaced_config_map("c", "old")).data == {"n": "2"}


async def test_stop_leaves_no_process_and_no_files() -> None:
    plane = ControlPlane()
    await plane.start()
    pids = plane.pids
    workdir = plane.workdir
    assert set(pids) == {"etcd", "kube-apiserver"}
    for pid in pids.values():
        assert os.getpgid(pid) == pid  # each leads a process group of its own
    await plane.stop()
    assert all(_process_gone(pid) for pid in pids.values())
    assert not workdir.exists()
    assert plane.pids == {}
    await plane.stop()  # a second stop is harmless


ABANDON = """
import asyncio, json, sys
from crdkit.testing import ControlPlane

async def main():
    plane = ControlPlane()
    await plane.start()
    print(json.dumps({"pids": plane.pids, "workdir": str(plane.workdir)}), flush=True)
    sys.exit(3)  # no stop(): the interpreter's exit must clean up

asyncio.run(main())
"""


def test_a_control_plane_never_stopped_is_cleaned_up_at_exit() -> None:
    child = subprocess.run(
        [sys.executable, "-c", ABANDON], capture_output=True, text=True, timeout=90, check=False
    )
    assert child.returncode == 3, child.stderr
    left = json.loads(child.stdout)
    assert set(left["pids"]) == {"etcd", "kube-apiserver"}
    assert all(_process_gone(pid) for pid in left["pids"].values())
    assert not Path(left["workdir"]).exists()


FORK_EXITS = """
import asyncio, json, os, ssl, sys, urllib.request
from crdkit.testing import ControlPlane

plane = ControlPlane()
asyncio.run(plane.start())
child = os.fork()
if child == 0:
    sys.exit(0)  # a fork's normal exit: its atexit handlers run, and nothing else of ours
os.waitpid(child, 0)
tls = ssl.create_default_context(cafile=plane.ca_file)
tls.load_cert_chain(plane.client_cert_file, plane.client_key_file)
ready = urllib.request.urlopen(plane.server_url + "/readyz", context=tls, timeout=30).read()
print(json.dumps({"workdir": plane.workdir.exists(), "ready": ready.decode()}), flush=True)
asyncio.run(plane.stop())
"""


def test_the_exit_of_a_fork_leaves_the_control_plane_running() -> None:
    child = subprocess.run(
        [sys.executable, "-c", FORK_EXITS], capture_output=True, text=True, timeout=90, check=False
    )
    assert child.returncode == 0, child.stderr
    assert json.loads(child.stdout) == {"workdir": True, "ready": "ok"}


async def test_cancelled_start_cleans_up() -> None:
    plane = ControlPlane()
    starting = asyncio.create_task(plane.start())
    for _ in range(6000):
        if "kube-apiserver" in plane.pids:
            break
        await asyncio.sleep(0.01)
    pids, workdir = plane.pids, plane.workdir
    starting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await starting
    assert all(_process_gone(pid) for pid in pids.values())
    assert not workdir.exists()


async def test_a_failing_apiserver_is_reported_with_its_log(tmp_path: Path) -> None:
    real = ControlPlane()
    await real.start()
    binaries = real.binaries
    await real.stop()
    plane = ControlPlane(binaries=binaries, apiserver_args=["--no-such-flag"])
    with pytest.raises(ControlPlaneError, match="kube-apiserver exited") as failed:
        await plane.start()
    assert "no-such-flag" in str(failed.value)
    assert plane.pids == {}


@pytest.mark.parametrize("taken", [0, 2], ids=["etcd-port", "apiserver-port"])
async def test_a_port_taken_after_it_was_chosen_is_chosen_again(
    monkeypatch: pytest.MonkeyPatch, taken: int
) -> None:
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", 0))
    squatter.listen()
    calls: list[list[int]] = []

    def racy_free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
        ports = processes.free_ports(count, host)
        if not calls:
            ports[taken] = squatter.getsockname()[1]
        calls.append(ports)
        return ports

    monkeypatch.setattr(control_plane_module, "free_ports", racy_free_ports)
    try:
        async with ControlPlane() as plane:
            assert len(calls) == 2
            assert squatter.getsockname()[1] not in calls[1]
            assert plane.server_url.endswith(f":{calls[1][2]}")
    finally:
        squatter.close()


async def test_binaries_that_do_not_exist_fail_cleanly(tmp_path: Path) -> None:
    plane = ControlPlane(
        binaries=Binaries(tmp_path / "kube-apiserver", tmp_path / "etcd"), workdir_parent=tmp_path
    )
    with pytest.raises(FileNotFoundError):
        await plane.start()
    assert plane.pids == {}
    assert os.listdir(tmp_path) == []
