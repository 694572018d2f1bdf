"""Runtime benchmark: a crdkit operator against controller-runtime and kopf peers.

    python benches/runtime_bench.py --objects 2000 --json [--repeat 3] [--only NAME ...]

On one local control plane, each operator in turn (never two at once, so they do not share
CPU), in its own process limited to a fresh namespace, doing the same work: one status write
per ``RuntimeBenchItem`` (``status.observed = spec.value``), no Events, no finalizers. The
operators (``--only`` picks some; all by default):

- ``crdkit``: ``crdkit run runtime_bench_operators.py:BenchReconciler``, 32 workers, on
  asyncio's own event loop (``--event-loop asyncio``: what runs where uvloop is not installed);
- ``crdkit_uvloop``: the same with ``--event-loop uvloop``, what ``auto`` (the default) picks
  when crdkit[fast] is installed (``ratios.crdkit_vs_crdkit_uvloop``, and
  ``ratios.crdkit_uvloop_vs_controller_runtime``);
- ``controller_runtime``: a controller-runtime Manager (benches/controller_runtime_peer, Go,
  built here by its build.sh from the Go module proxy into ~/.cache/crdkit/bench-bin and skipped
  when up to date) with a typed reconciler doing the same write, the same 32 workers;
- ``controller_runtime_w1``: the same with controller-runtime's default of 1 worker;
- ``kopf``: ``kopf run`` on the same module (``pip install -e '.[bench]'``).

Per repeat (``--repeat``, default 3), the operators run interleaved, so a burst of load from
elsewhere hits them alike; every figure is the median over the repeats. Two runs per operator
and repeat:

- live: the operator starts on an empty namespace; once it is ready, N objects are created
  (64 requests in flight) and the clock runs from the first create to the last status seen
  through a watch (``live_s``, ``create_s``). ``ready_s`` is spawn to ready (/readyz: caches
  synced, for crdkit and controller-runtime; kopf's liveness endpoint, the nearest it has),
  ``startup_cpu_s`` the operator's CPU until then, ``live_cpu_s`` its CPU at the end, and
  ``cpu_per_object_ms`` the difference per object.
- backlog: the N objects exist first; the clock runs from spawning the operator to the last
  status (``backlog_s``). ``backlog_over_floor`` divides it by the floor of the same repeat:
  the N status writes done directly by this process, 32 at a time, with no operator, which
  bounds what any operator can reach on this apiserver and host (``backlog_floor_s``).

``live_rss_mb``, ``backlog_rss_mb``: the operator's peak resident set (VmHWM) in each run;
``peak_rss_mb`` the larger. ``--profile PATH`` adds one more crdkit backlog run sampled by
py-spy (``crdkit_profile``: its CPU by kind of work, `_profile_split`). ``ratios`` divides
crdkit's median by each peer's (``crdkit_vs_controller_runtime``, ``crdkit_vs_kopf``,
``crdkit_vs_crdkit_uvloop``; below 1: crdkit needs less). A peer
that cannot be built or fails is reported under its name with an ``error``, not fatal.

The flat keys of earlier versions stay (now medians): ``crdkit_s`` and ``kopf_s`` (live),
``*_rss_mb``, ``throughput_ratio`` and ``memory_ratio`` (kopf / crdkit), ``*_create_s``,
``*_operator_cpu_s``, ``*_backlog_s``, ``*_backlog_rss_mb``, ``*_backlog_operator_cpu_s``,
``backlog_floor_s``, ``backlog_ratio``; one JSON object on stdout. Objects are not deleted
between runs (envtest has no garbage collector); each run has its own namespace.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crdkit.client import Client, GroupVersionKind
from crdkit.runtime import Informer
from crdkit.testing import ControlPlane, crd_manifest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _profile_split  # noqa: E402
import go_peer  # noqa: E402
from runtime_bench_operators import GROUP, KIND, PLURAL, VERSION  # noqa: E402

OPERATORS_MODULE = HERE / "runtime_bench_operators.py"
PEER_DIR = HERE / "controller_runtime_peer"
IN_FLIGHT = 64
CRDKIT_WORKERS = 32
READY_POLL_S = 0.02
READY_TIMEOUT_S = 120

CRD = crd_manifest(
    GROUP,
    KIND,
    {
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
    },
    version=VERSION,
    plural=PLURAL,
    status_subresource=True,
)


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for pid {pid}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Operator:
    """One contender: ``name`` prefixes its JSON keys; ``workers`` is its concurrent
    reconciles (None for kopf, which runs one task per object); ``ready_path`` is what tells
    that it is up."""

    name: str
    framework: str
    workers: int | None
    ready_path: str
    args: tuple[str, ...] = ()
    """More arguments for its command line."""


OPERATORS: dict[str, Operator] = {
    op.name: op
    for op in (
        # Named, not left to auto (which picks uvloop when it is installed).
        Operator("crdkit", "crdkit", CRDKIT_WORKERS, "/readyz", ("--event-loop", "asyncio")),
        # The same operator on uvloop (crdkit[fast]; the dev install has it).
        Operator("crdkit_uvloop", "crdkit", CRDKIT_WORKERS, "/readyz", ("--event-loop", "uvloop")),
        Operator("controller_runtime", "controller-runtime", CRDKIT_WORKERS, "/readyz"),
        Operator("controller_runtime_w1", "controller-runtime", 1, "/readyz"),
        Operator("kopf", "kopf", None, "/healthz"),
    )
}


def operator_command(
    op: Operator, namespace: str, port: int, kubeconfig: Path, peer: Path | None = None
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of one operator process; ``peer`` is the
    controller-runtime binary, needed only for that framework."""
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent)]),
        "KUBECONFIG": str(kubeconfig),
    }
    # The flags crdkit and the controller-runtime peer share (the peer mirrors crdkit's).
    shared = [
        *("--kubeconfig", str(kubeconfig), "--namespace", namespace),
        *("--max-concurrent-reconciles", str(op.workers)),
        *("--health-probe-bind-address", f"127.0.0.1:{port}"),
    ]
    if op.framework == "crdkit":
        return [
            str(bin_dir / "crdkit"),
            "run",
            f"{OPERATORS_MODULE}:BenchReconciler",
            *shared,
            *("--metrics-bind-address", "0", "--log-level", "warning"),
            *op.args,
        ], env
    if op.framework == "controller-runtime":
        if peer is None:
            raise ValueError("the controller-runtime operator needs the peer binary")
        return [
            str(peer),
            "operator",
            *shared,
            "--group",
            GROUP,
            "--api-version",
            VERSION,
            "--kind",
            KIND,
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
        str(OPERATORS_MODULE),
    ], env


async def wait_ready(port: int, process: asyncio.subprocess.Process, path: str) -> None:
    """Poll ``path`` every ``READY_POLL_S`` until it answers 200."""
    deadline = time.monotonic() + READY_TIMEOUT_S
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
        await asyncio.sleep(READY_POLL_S)
    raise RuntimeError(f"operator not ready within {READY_TIMEOUT_S} s")


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


async def write_floor(plane: ControlPlane, client: Client, objects: int, namespace: str) -> float:
    """The backlog without any operator: this process lists the objects and writes each status
    itself, ``CRDKIT_WORKERS`` at a time. No operator can beat it on this apiserver and host."""
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
    plane: ControlPlane,
    client: Client,
    op: Operator,
    objects: int,
    *,
    backlog: bool,
    repeat: int,
    peer: Path | None = None,
    profile: Path | None = None,
) -> dict[str, float]:
    """One operator, one namespace. Live: the operator is up, then the objects are created and
    the clock starts at the first create. Backlog: the objects exist first, then the operator
    starts and the clock starts when its process is spawned. With ``profile``, py-spy samples
    the operator from its spawn to its last status into that file."""
    mode = "backlog" if backlog else "live"
    suffix = "-profile" if profile is not None else ""
    namespace = f"bench-{op.name.replace('_', '-')}-{mode}-{repeat}{suffix}"
    await plane.create_namespace(namespace)
    if backlog:
        await create_objects(client, namespace, objects)
    port = free_port()
    command, env = operator_command(op, namespace, port, Path(plane.kubeconfig_path), peer)
    log_path = Path(plane.workdir) / f"{namespace}-operator.log"
    result: dict[str, float] = {}
    async with Progress(client, namespace, objects) as progress:
        with log_path.open("wb") as log:
            spawned = time.perf_counter()
            try:
                process = await asyncio.create_subprocess_exec(
                    *command, env=env, stderr=log, stdout=log
                )
            except OSError as error:
                raise RuntimeError(f"cannot start {command[0]}: {error}") from error
            sampler = None if profile is None else _profile_split.record(process.pid, profile)
            try:
                if backlog:
                    started = spawned
                else:
                    await wait_ready(port, process, op.ready_path)
                    result["ready_s"] = time.perf_counter() - spawned
                    result["startup_cpu_s"] = cpu_seconds(process.pid)
                    started = time.perf_counter()
                    await create_objects(client, namespace, objects)
                    result["create_s"] = time.perf_counter() - started
                await asyncio.wait_for(progress.all_done.wait(), 1800)
                result[f"{mode}_s"] = time.perf_counter() - started
                result[f"{mode}_rss_mb"] = peak_rss_mb(process.pid)
                result[f"{mode}_cpu_s"] = cpu_seconds(process.pid)
            except Exception as error:
                raise RuntimeError(f"{error} (log: {log_tail(log_path)})") from error
            finally:
                if sampler is not None:
                    sampler.send_signal(signal.SIGINT)  # py-spy writes its file and exits
                    await asyncio.to_thread(sampler.wait, 60)
                if process.returncode is None:
                    process.send_signal(signal.SIGTERM)
                    try:
                        await asyncio.wait_for(process.wait(), 30)
                    except TimeoutError:
                        process.kill()
                        await process.wait()
    return result


async def profile_backlog(
    plane: ControlPlane, client: Client, objects: int, path: Path
) -> dict[str, Any]:
    """One more crdkit backlog run, sampled by py-spy into ``path``: where its CPU went, by
    kind of work (`_profile_split`). Sampling costs the operator some CPU, so this run's
    figures are reported apart and are not among the medians."""
    run = await run_one(
        plane, client, OPERATORS["crdkit"], objects, backlog=True, repeat=0, profile=path
    )
    lines = await asyncio.to_thread(_profile_split.read_lines, path)
    return {
        "path": str(path),
        "samples": _profile_split.total_samples(lines),
        "backlog_s": round(run["backlog_s"], 3),
        "backlog_cpu_s": round(run["backlog_cpu_s"], 3),
        "cpu_split_pct": _profile_split.split(lines),
    }


def log_tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "none"
    return " | ".join(text.strip().splitlines()[-lines:]) or "empty"


def per_repeat(run: dict[str, float], objects: int, floor: float) -> dict[str, float]:
    """The figures of one repeat of one operator, from its live and backlog measurements."""
    out = dict(run)
    out["cpu_per_object_ms"] = (run["live_cpu_s"] - run["startup_cpu_s"]) / objects * 1000
    out["peak_rss_mb"] = max(run["live_rss_mb"], run["backlog_rss_mb"])
    out["backlog_over_floor"] = run["backlog_s"] / floor
    return out


ROUNDING = {
    "live_s": 3,
    "create_s": 3,
    "ready_s": 3,
    "startup_cpu_s": 2,
    "live_cpu_s": 2,
    "cpu_per_object_ms": 3,
    "live_rss_mb": 1,
    "backlog_s": 3,
    "backlog_cpu_s": 2,
    "backlog_rss_mb": 1,
    "peak_rss_mb": 1,
    "backlog_over_floor": 2,
}
RATIO_KEYS = {
    "cpu_per_object": "cpu_per_object_ms",
    "peak_rss": "peak_rss_mb",
    "spawn_to_ready": "ready_s",
    "backlog_over_floor": "backlog_over_floor",
}


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return round(numerator / denominator, 2)


def summarize(
    objects: int,
    names: list[str],
    runs: dict[str, list[dict[str, float]]],
    floors: list[float],
    errors: dict[str, str],
    peer: dict[str, Any] | None,
) -> dict[str, Any]:
    """The report: medians per operator over the repeats, ratios, and the legacy flat keys.

    ``runs[name]`` holds one dict per completed repeat with the keys of ``run_one``'s live and
    backlog results merged; ``floors`` one floor per repeat (the same index); ``errors`` why an
    operator has no (or fewer) runs; ``peer`` the controller-runtime build (None: not needed).
    """
    operators: dict[str, dict[str, Any]] = {}
    medians: dict[str, dict[str, float]] = {}
    raw: dict[str, list[dict[str, float]]] = {}
    for name in names:
        op = OPERATORS[name]
        entry: dict[str, Any] = {"framework": op.framework, "workers": op.workers}
        repeats = [per_repeat(run, objects, floors[i]) for i, run in enumerate(runs.get(name, []))]
        if repeats:
            median = {key: statistics.median(r[key] for r in repeats) for key in ROUNDING}
            medians[name] = median
            entry.update({key: round(median[key], digits) for key, digits in ROUNDING.items()})
            entry["repeats"] = len(repeats)
            raw[name] = [{key: round(r[key], ROUNDING[key]) for key in ROUNDING} for r in repeats]
        if name in errors:
            entry["error"] = errors[name]
        operators[name] = entry

    out: dict[str, Any] = {"objects": objects, "repeat": len(floors)}
    # The flat keys of the earlier, crdkit-vs-kopf version (medians now).
    for name, median in medians.items():
        out[f"{name}_s"] = round(median["live_s"], 3)
        out[f"{name}_rss_mb"] = round(median["live_rss_mb"], 1)
    if "crdkit" in medians and "kopf" in medians:
        crdkit, kopf = medians["crdkit"], medians["kopf"]
        out["throughput_ratio"] = _ratio(kopf["live_s"], crdkit["live_s"])
        out["memory_ratio"] = _ratio(kopf["live_rss_mb"], crdkit["live_rss_mb"])
    for name, median in medians.items():
        out[f"{name}_create_s"] = round(median["create_s"], 3)
        out[f"{name}_operator_cpu_s"] = round(median["live_cpu_s"], 2)
    for name, median in medians.items():
        out[f"{name}_backlog_s"] = round(median["backlog_s"], 3)
        out[f"{name}_backlog_rss_mb"] = round(median["backlog_rss_mb"], 1)
        out[f"{name}_backlog_operator_cpu_s"] = round(median["backlog_cpu_s"], 2)
    if floors:
        out["backlog_floor_s"] = round(statistics.median(floors), 3)
    if "crdkit" in medians and "kopf" in medians:
        out["backlog_ratio"] = _ratio(medians["kopf"]["backlog_s"], medians["crdkit"]["backlog_s"])
    out["crdkit_workers"] = CRDKIT_WORKERS
    out["in_flight_creates"] = IN_FLIGHT

    out["operators"] = operators
    ratios: dict[str, dict[str, float | None]] = {}
    pairs = (
        ("crdkit", "controller_runtime"),
        ("crdkit", "kopf"),
        ("crdkit", "crdkit_uvloop"),
        ("crdkit_uvloop", "controller_runtime"),
    )
    for own_name, peer_name in pairs:
        if own_name not in names or peer_name not in names:
            continue
        ours, theirs = medians.get(own_name), medians.get(peer_name)
        ratios[f"{own_name}_vs_{peer_name}"] = {
            label: _ratio(ours[key], theirs[key]) if ours and theirs else None
            for label, key in RATIO_KEYS.items()
        }
    out["ratios"] = ratios
    if peer is not None:
        out["controller_runtime_peer"] = peer
    out["floor_runs_s"] = [round(f, 3) for f in floors]
    out["runs"] = raw
    return out


def precompile() -> None:
    """Byte-compile crdkit's modules and the bench operators before any operator starts, as
    pip does when it installs a wheel. In an editable install under PYTHONDONTWRITEBYTECODE
    (this machine sets it) every spawn would otherwise compile about 70 modules from source:
    a tenth of a second of start-up that no installed operator pays."""
    import compileall

    import crdkit

    for folder in (Path(crdkit.__file__).parent, HERE):
        compileall.compile_dir(folder, quiet=1)


async def main(
    objects: int, names: list[str], repeat: int, profile: Path | None = None
) -> dict[str, Any]:
    loadavg_start = [round(v, 2) for v in os.getloadavg()]
    errors: dict[str, str] = {}
    binary: Path | None = None
    peer: dict[str, Any] | None = None
    if any(OPERATORS[name].framework == "controller-runtime" for name in names):
        binary, error = go_peer.build(PEER_DIR / "build.sh", "controller-runtime")
        if binary is None:
            peer = {"error": error}
            print(error, file=sys.stderr)
            for name in names:
                if OPERATORS[name].framework == "controller-runtime":
                    errors[name] = str(error)
        else:
            peer = go_peer.version_info(binary)
    precompile()
    active = [name for name in names if name not in errors]
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    floors: list[float] = []
    async with ControlPlane() as plane:
        await plane.install_crds([CRD])
        async with Client.from_control_plane(plane) as client:
            for index in range(repeat):
                measured: dict[str, dict[str, float]] = {name: {} for name in active}
                for backlog in (False, True):
                    for name in list(active):
                        try:
                            measured[name].update(
                                await run_one(
                                    plane,
                                    client,
                                    OPERATORS[name],
                                    objects,
                                    backlog=backlog,
                                    repeat=index,
                                    peer=binary,
                                )
                            )
                        except Exception as error:
                            if name == "crdkit":
                                raise
                            errors[name] = f"repeat {index + 1}: {error}"
                            print(f"{name}: {errors[name]}", file=sys.stderr)
                            active.remove(name)
                        else:
                            mode = "backlog" if backlog else "live"
                            print(f"repeat {index + 1} {name} {mode}: done", file=sys.stderr)
                floors.append(await write_floor(plane, client, objects, f"bench-floor-{index}"))
                for name in active:
                    runs[name].append(measured[name])
            profiled = None
            if profile is not None and "crdkit" in names:
                profiled = await profile_backlog(plane, client, objects, profile)
    out = summarize(objects, names, runs, floors, errors, peer)
    if profiled is not None:
        out["crdkit_profile"] = profiled
    out["loadavg"] = {"start": loadavg_start, "end": [round(v, 2) for v in os.getloadavg()]}
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=2000)
    parser.add_argument("--json", action="store_true", help="print only the JSON object")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved repeats; medians")
    parser.add_argument(
        "--only",
        choices=list(OPERATORS),
        action="append",
        help="run only these operators (repeatable); all by default",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        metavar="PATH",
        help="also run crdkit's backlog once under py-spy (raw format to PATH) and report its "
        "CPU by kind of work (crdkit_profile)",
    )
    args = parser.parse_args()
    if args.profile is not None:
        _profile_split.py_spy()  # refuse at once, not after the repeats, if py-spy is missing
    if args.objects < 1:
        parser.error("--objects must be at least 1")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    names = [name for name in OPERATORS if name in (args.only or OPERATORS)]
    result = asyncio.run(main(args.objects, names, args.repeat, args.profile))
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
