"""Runtime benchmark: a crdkit operator against an equivalent kopf operator.

    python benches/runtime_bench.py --objects 2000 --json

On one local control plane, for each operator in turn (never both at once, so they do not
share CPU): start the operator in its own process, limited to a fresh namespace; once it is
up, create N ``RuntimeBenchItem`` objects at once (64 requests in flight) and time until every
object's ``status.observed`` has been written (seen through a watch). The operators are in
``runtime_bench_operators.py``: one status write per object, no Events, no finalizers.

Reported: ``crdkit_s`` and ``kopf_s`` (first create → last status seen), ``crdkit_rss_mb``
and ``kopf_rss_mb`` (the operator process's peak resident set, VmHWM), and
``throughput_ratio`` = kopf time / crdkit time. One JSON object on stdout.

Also reported, to tell the operators' own cost from the apiserver's: ``*_create_s`` (how long
the creates took while that operator ran), ``*_operator_cpu_s`` (the operator process's CPU
time), a *backlog* run per operator (the N objects exist before the operator starts; the clock
runs from spawning it to the last status: ``*_backlog_s``, ``backlog_ratio``), and
``backlog_floor_s``: the same N status writes done directly by this process, with no operator,
which bounds what any operator can reach on this apiserver and host.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

from crdkit.client import Client, GroupVersionKind
from crdkit.runtime import Informer
from crdkit.testing import ControlPlane

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from runtime_bench_operators import GROUP, KIND, PLURAL, VERSION  # noqa: E402

OPERATORS = HERE / "runtime_bench_operators.py"
IN_FLIGHT = 64
CRDKIT_WORKERS = 32

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"{PLURAL}.{GROUP}"},
    "spec": {
        "group": GROUP,
        "names": {
            "kind": KIND,
            "plural": PLURAL,
            "singular": KIND.lower(),
            "listKind": KIND + "List",
        },
        "scope": "Namespaced",
        "versions": [
            {
                "name": VERSION,
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {"value": {"type": "integer", "minimum": 0}},
                            },
                            "status": {
                                "type": "object",
                                "properties": {"observed": {"type": "integer"}},
                            },
                        },
                    }
                },
            }
        ],
    },
}


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for pid {pid}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def operator_command(name: str, namespace: str, port: int) -> tuple[list[str], dict[str, str]]:
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent)])}
    if name == "crdkit":
        return [
            str(bin_dir / "crdkit"),
            "run",
            f"{OPERATORS}:BenchReconciler",
            "--namespace",
            namespace,
            "--max-concurrent-reconciles",
            str(CRDKIT_WORKERS),
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
        ], env
    kopf = shutil.which("kopf", path=str(bin_dir)) or "kopf"
    env["CRDKIT_BENCH_KOPF"] = "1"
    return [
        kopf,
        "run",
        "--standalone",
        "--quiet",
        "--namespace",
        namespace,
        f"--liveness=http://127.0.0.1:{port}/healthz",
        str(OPERATORS),
    ], env


async def wait_healthy(port: int, process: asyncio.subprocess.Process, path: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.returncode is not None:
            raise RuntimeError(f"operator exited with {process.returncode} before it was ready")
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            await writer.drain()
            status_line = await reader.readline()
            writer.close()
            if b" 200 " in status_line:
                return
        except OSError:
            pass
        await asyncio.sleep(0.2)
    raise RuntimeError("operator not ready within 120 s")


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Progress:
    """Watches a namespace and tells when every object's status has been written."""

    def __init__(self, client: Client, namespace: str, objects: int) -> None:
        self.objects = objects
        self.done: set[str] = set()
        self.all_done = asyncio.Event()
        self.informer: Informer[dict[str, Any]] = Informer(
            client, GroupVersionKind(GROUP, VERSION, KIND), namespace=namespace
        )
        self.informer.add_event_handler(self._observe, lambda _old, new: self._observe(new))

    def _observe(self, obj: dict[str, Any]) -> None:
        status = obj.get("status") or {}
        if status.get("observed") == obj["spec"]["value"]:
            self.done.add(obj["metadata"]["name"])
            if len(self.done) >= self.objects:
                self.all_done.set()

    async def __aenter__(self) -> Progress:
        await self.informer.start()
        await self.informer.wait_for_sync(60)
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.informer.stop()


async def create_objects(client: Client, namespace: str, objects: int) -> None:
    """Create the objects, ``IN_FLIGHT`` requests at a time."""
    limit = asyncio.Semaphore(IN_FLIGHT)

    async def create(i: int) -> None:
        body = {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": KIND,
            "metadata": {"name": f"item-{i:05d}", "namespace": namespace},
            "spec": {"value": i},
        }
        async with limit:
            await client.create(body)

    await asyncio.gather(*(create(i) for i in range(objects)))


async def write_floor(plane: ControlPlane, client: Client, objects: int) -> float:
    """The backlog without any operator: this process lists the objects and writes each status
    itself, ``CRDKIT_WORKERS`` at a time. No operator can beat it on this apiserver and host."""
    namespace = "bench-floor"
    await plane.create_namespace(namespace)
    await create_objects(client, namespace, objects)
    gvk = GroupVersionKind(GROUP, VERSION, KIND)
    limit = asyncio.Semaphore(CRDKIT_WORKERS)
    started = time.perf_counter()

    async def write(obj: dict[str, Any]) -> None:
        obj["status"] = {"observed": obj["spec"]["value"]}
        async with limit:
            await client.replace_status(obj)

    items = (await client.list(gvk, namespace=namespace)).items
    await asyncio.gather(*(write(obj) for obj in items))
    return time.perf_counter() - started


async def run_one(
    plane: ControlPlane, client: Client, name: str, objects: int, *, backlog: bool
) -> dict[str, float]:
    """One operator, one namespace. Live: the operator is up, then the objects are created and
    the clock starts at the first create. Backlog: the objects exist first, then the operator
    starts and the clock starts when its process is spawned."""
    namespace = f"bench-{name}-{'backlog' if backlog else 'live'}"
    await plane.create_namespace(namespace)
    if backlog:
        await create_objects(client, namespace, objects)
    port = free_port()
    command, env = operator_command(name, namespace, port)
    log_path = Path(plane.workdir) / f"{namespace}-operator.log"
    result: dict[str, float] = {}
    async with Progress(client, namespace, objects) as progress:
        with log_path.open("wb") as log:
            started = time.perf_counter()
            process = await asyncio.create_subprocess_exec(
                *command,
                env={**env, "KUBECONFIG": str(plane.kubeconfig_path)},
                stderr=log,
                stdout=log,
            )
            try:
                if not backlog:
                    await wait_healthy(port, process, "/readyz" if name == "crdkit" else "/healthz")
                    started = time.perf_counter()
                    await create_objects(client, namespace, objects)
                    result["create_s"] = time.perf_counter() - started
                await asyncio.wait_for(progress.all_done.wait(), 1800)
                result["seconds"] = time.perf_counter() - started
                result["rss_mb"] = peak_rss_mb(process.pid)
                result["cpu_s"] = cpu_seconds(process.pid)
            finally:
                if process.returncode is None:
                    process.send_signal(signal.SIGTERM)
                    try:
                        await asyncio.wait_for(process.wait(), 30)
                    except TimeoutError:
                        process.kill()
                        await process.wait()
    return result


async def main(objects: int, only: list[str]) -> dict[str, Any]:
    live: dict[str, dict[str, float]] = {}
    backlog: dict[str, dict[str, float]] = {}
    async with ControlPlane() as plane:
        await plane.install_crds([CRD])
        async with Client.from_control_plane(plane) as client:
            for name in only:
                live[name] = await run_one(plane, client, name, objects, backlog=False)
            for name in only:
                backlog[name] = await run_one(plane, client, name, objects, backlog=True)
            floor = await write_floor(plane, client, objects)
    out: dict[str, Any] = {"objects": objects}
    for name in only:
        out[f"{name}_s"] = round(live[name]["seconds"], 3)
        out[f"{name}_rss_mb"] = round(live[name]["rss_mb"], 1)
    if len(only) == 2:
        out["throughput_ratio"] = round(live["kopf"]["seconds"] / live["crdkit"]["seconds"], 2)
        out["memory_ratio"] = round(live["kopf"]["rss_mb"] / live["crdkit"]["rss_mb"], 2)
    for name in only:
        out[f"{name}_create_s"] = round(live[name]["create_s"], 3)
        out[f"{name}_operator_cpu_s"] = round(live[name]["cpu_s"], 2)
    for name in only:
        out[f"{name}_backlog_s"] = round(backlog[name]["seconds"], 3)
        out[f"{name}_backlog_rss_mb"] = round(backlog[name]["rss_mb"], 1)
        out[f"{name}_backlog_operator_cpu_s"] = round(backlog[name]["cpu_s"], 2)
    out["backlog_floor_s"] = round(floor, 3)
    if len(only) == 2:
        out["backlog_ratio"] = round(backlog["kopf"]["seconds"] / backlog["crdkit"]["seconds"], 2)
    out["crdkit_workers"] = CRDKIT_WORKERS
    out["in_flight_creates"] = IN_FLIGHT
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=2000)
    parser.add_argument("--json", action="store_true", help="print only the JSON object")
    parser.add_argument(
        "--only", choices=["crdkit", "kopf"], action="append", help="run one side only"
    )
    args = parser.parse_args()
    if args.objects < 1:
        parser.error("--objects must be at least 1")
    result = asyncio.run(main(args.objects, args.only or ["crdkit", "kopf"]))
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
