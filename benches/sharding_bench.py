"""Sharding benchmark: one ring of 1, 2 and 3 ``crdkit run --shards`` replicas on N objects.

    python benches/sharding_bench.py --objects 10000 --json [--shards 1 2 3] [--lease-duration 15]

On one local control plane, for each ring size in turn (a fresh namespace each), N
``RuntimeBenchItem`` objects exist first; then the shards of ring ``bench`` start together
(``crdkit run benches/runtime_bench_operators.py:BenchReconciler --shards``, 32 workers each:
one status write per object, as in ``runtime_bench.py``). Figures per ring size:

- ``initial_s``: spawn to every object's status written (labelled by the sharder first);
- per shard: ``objects`` held (its label, once settled) and their ``share``, ``rss_mb`` (its
  resident set then), ``cache_mb`` (that, less the RSS of one shard ready on an empty
  namespace: what holding its objects costs), ``cpu_s`` and ``cpu_per_object_ms`` (CPU per
  object it holds), and whether it ran the ``sharder``;
- ``cache_vs_singleton``: each shard's ``cache_mb`` over the one-shard ring's;
- changes: ``--changes`` objects get a new ``spec.value`` (``--change-rate`` a second);
  ``time_to_desired_p50_s``/``p99_s`` run from each patch to its status seen through a watch,
  ``queue_time_p99_s`` is the p99 of the shards' ``workqueue_queue_duration_seconds`` over
  those changes only (bucket upper bounds, summed over the shards);
- death (two or more shards): a shard that is not the sharder is SIGKILLed, and right after
  that ``--death-changes`` of its objects (1,000 by default, at ``--death-change-rate``, 200 a
  second) get a new value while no live shard owns them. ``rebalance_s`` runs from the kill
  to the last of those changes reconciled by a survivor (which takes a dead shard's objects
  over before they are relabelled): the longest any of them was left without a live owner,
  against the target of ``lease_duration_s + 2``. ``relabelled_s`` runs to the last of the
  dead shard's objects labelled for a live shard.

``<n>+sharder`` (``--apart n``, 3 by default) is one more ring of ``n`` shards
(``--shard-role shard``) beside a replica that only stands for the sharder (``--shard-role
sharder``), whose RSS and CPU are ``sharder_process``: the layout in which no shard carries the
ring's metadata.

``sharder_alone`` (``_sharder_alone.py``) runs the sharder with no shard processes, three
shard Leases held by its own process: the time and CPU to assign the N objects, then to move
a third of them when one Lease stops being renewed. One JSON object on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from crdkit.client import Client, GroupVersionKind
from crdkit.resources import Lease
from crdkit.runtime import Informer
from crdkit.runtime.sharding import drain_label, shard_label
from crdkit.testing import ControlPlane

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from runtime_bench import (  # noqa: E402
    CRD,
    OPERATORS_MODULE,
    cpu_seconds,
    create_objects,
    free_port,
    wait_ready,
)
from runtime_bench_operators import GROUP, KIND, VERSION  # noqa: E402

RING = "bench"
WORKERS = 32
GVK = GroupVersionKind(GROUP, VERSION, KIND)
CONTROLLER = "runtime-bench"  # the work queue's name: the reconciler's


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


class Shard:
    def __init__(self, shard: str, process: asyncio.subprocess.Process, probe: int, metrics: int):
        self.shard, self.process, self.probe, self.metrics = shard, process, probe, metrics


async def spawn(
    plane: ControlPlane, namespace: str, shard: str, lease: float, log: Path, role: str = "both"
) -> Shard:
    probe, metrics = free_port(), free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent)])}
    command = [
        str(Path(sys.executable).with_name("crdkit")),
        "run",
        f"{OPERATORS_MODULE}:BenchReconciler",
        *("--kubeconfig", str(plane.kubeconfig_path), "--namespace", namespace),
        *("--max-concurrent-reconciles", str(WORKERS), "--log-level", "warning"),
        *("--health-probe-bind-address", f"127.0.0.1:{probe}"),
        *("--metrics-bind-address", f"127.0.0.1:{metrics}"),
        *("--shards", "--shard-ring", RING, "--shard-id", shard, "--shard-role", role),
        *("--leader-elect-lease-duration", str(lease)),
        *("--leader-elect-renew-deadline", str(lease * 2 / 3)),
        *("--leader-elect-retry-period", str(min(2.0, lease / 5))),
    ]
    with log.open("ab") as out:
        process = await asyncio.create_subprocess_exec(*command, env=env, stdout=out, stderr=out)
    return Shard(shard, process, probe, metrics)


async def stop(shard: Shard) -> None:
    if shard.process.returncode is None:
        shard.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(shard.process.wait(), 60)
        except TimeoutError:
            shard.process.kill()
            await shard.process.wait()


async def queue_buckets(shard: Shard) -> dict[float, float]:
    """Cumulative counts of the shard's queue-duration histogram, by upper bound."""
    reader, writer = await asyncio.open_connection("127.0.0.1", shard.metrics)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    await writer.drain()
    raw = await reader.read()
    writer.close()
    text = raw.partition(b"\r\n\r\n")[2].decode()
    buckets: dict[float, float] = {}
    for family in text_string_to_metric_families(text):
        if family.name != "workqueue_queue_duration_seconds":
            continue
        for sample in family.samples:
            if sample.name.endswith("_bucket") and sample.labels.get("name") == CONTROLLER:
                bound = float(sample.labels["le"])
                buckets[bound] = buckets.get(bound, 0.0) + sample.value
    return buckets


def p99_of_buckets(before: dict[float, float], after: dict[float, float]) -> float | None:
    diff = {bound: after.get(bound, 0.0) - before.get(bound, 0.0) for bound in after}
    total = diff.get(float("inf"), 0.0)
    if total <= 0:
        return None
    for bound in sorted(diff):
        if diff[bound] >= 0.99 * total:
            return bound
    return None


class Tracker:
    """Every object's shard label and whether its status is written, through one watch; and
    when each changed."""

    def __init__(self, client: Client, namespace: str) -> None:
        self.labels: dict[str, str | None] = {}
        self.draining: set[str] = set()
        self.value: dict[str, int] = {}
        self.observed: dict[str, int | None] = {}
        self.label_at: dict[str, float] = {}
        self.observed_at: dict[str, float] = {}
        self.informer: Informer[dict[str, Any]] = Informer(client, GVK, namespace=namespace)
        self.informer.add_event_handler(self._see, lambda _old, new: self._see(new))

    def _see(self, obj: dict[str, Any]) -> None:
        now = time.perf_counter()
        name = obj["metadata"]["name"]
        labels = obj["metadata"].get("labels") or {}
        shard = labels.get(shard_label(RING))
        if self.labels.get(name) != shard:
            self.label_at[name] = now
        self.labels[name] = shard
        if labels.get(drain_label(RING)):
            self.draining.add(name)
        else:
            self.draining.discard(name)
        self.value[name] = obj["spec"]["value"]
        observed = (obj.get("status") or {}).get("observed")
        if observed == obj["spec"]["value"] and self.observed.get(name) != observed:
            self.observed_at[name] = now
        self.observed[name] = observed

    def all_done(self, objects: int) -> bool:
        return len(self.value) >= objects and all(
            self.observed.get(name) == value for name, value in self.value.items()
        )

    def settled(self, live: set[str]) -> bool:
        return not self.draining and all(shard in live for shard in self.labels.values())


async def until(check: Any, within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {within:g} s")
        await asyncio.sleep(0.05)


async def baseline_rss(plane: ControlPlane, lease: float, log: Path) -> float:
    """One shard ready on an empty namespace: the RSS that holds no object."""
    namespace = "shard-bench-empty"
    await plane.create_namespace(namespace)
    shard = await spawn(plane, namespace, "s0", lease, log)
    try:
        await wait_ready(shard.probe, shard.process, "/readyz")
        await asyncio.sleep(1)
        return rss_mb(shard.process.pid)
    finally:
        await stop(shard)


async def sharder_identity(client: Client, namespace: str) -> str | None:
    lease = await client.get(Lease, f"{RING}-sharder", namespace=namespace)
    holder = lease.spec.holder_identity
    for shard_lease in (await client.list(Lease, namespace=namespace)).items:
        if shard_lease.spec.holder_identity == holder and shard_lease.metadata.name != (
            f"{RING}-sharder"
        ):
            return shard_lease.metadata.labels.get("shard.crdkit.io/id")
    return None


async def change(
    client: Client, tracker: Tracker, namespace: str, names: list[str], rate: float
) -> dict[str, tuple[float, float]]:
    """Give ``names`` a new value at ``rate`` a second; for each, when it was patched and
    when its status was seen to follow."""
    sent: dict[str, tuple[float, int]] = {}
    began = time.perf_counter()
    for index, name in enumerate(names):
        await asyncio.sleep(max(0.0, began + index / rate - time.perf_counter()))
        value = tracker.value[name] + 1_000_000
        sent[name] = (time.perf_counter(), value)
        await client.patch(GVK, name, {"spec": {"value": value}}, namespace=namespace)
    await until(
        lambda: all(tracker.observed.get(n) == v for n, (_, v) in sent.items()),
        300,
        "every change reconciled",
    )
    return {n: (at, tracker.observed_at[n]) for n, (at, _) in sent.items()}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def ring_run(
    plane: ControlPlane,
    client: Client,
    size: int,
    args: argparse.Namespace,
    baseline: float,
    log: Path,
    *,
    apart: bool = False,
) -> dict[str, Any]:
    namespace = f"shard-bench-{size}{'-apart' if apart else ''}"
    await plane.create_namespace(namespace)
    await create_objects(client, namespace, args.objects)
    tracker = Tracker(client, namespace)
    await tracker.informer.start()
    await tracker.informer.wait_for_sync(120)
    shards: list[Shard] = []
    sharder_apart: Shard | None = None
    out: dict[str, Any] = {"sharder_apart": apart}
    try:
        started = time.perf_counter()
        role = "shard" if apart else "both"
        if apart:
            sharder_apart = await spawn(
                plane, namespace, "sharder", args.lease_duration, log, "sharder"
            )
        shards = [
            await spawn(plane, namespace, f"s{i}", args.lease_duration, log, role)
            for i in range(size)
        ]
        await until(lambda: tracker.all_done(args.objects), 1800, "initial desired state")
        out["initial_s"] = round(time.perf_counter() - started, 2)
        live = {shard.shard for shard in shards}
        await until(lambda: tracker.settled(live), 300, "labels settled")
        sharder = await sharder_identity(client, namespace)
        per_shard = {}
        for shard in shards:
            held = sum(1 for s in tracker.labels.values() if s == shard.shard)
            rss = rss_mb(shard.process.pid)
            cpu = cpu_seconds(shard.process.pid)
            per_shard[shard.shard] = {
                "objects": held,
                "share": round(held / args.objects, 3),
                "rss_mb": round(rss, 1),
                "cache_mb": round(rss - baseline, 1),
                "cpu_s": round(cpu, 2),
                "cpu_per_object_ms": round(1000 * cpu / held, 3) if held else None,
                "sharder": shard.shard == sharder,
            }
        out["shards"] = per_shard
        if sharder_apart is not None:
            out["sharder_process"] = {
                "rss_mb": round(rss_mb(sharder_apart.process.pid), 1),
                "cpu_s": round(cpu_seconds(sharder_apart.process.pid), 2),
            }
        before = [await queue_buckets(shard) for shard in shards]
        changed = await change(
            client, tracker, namespace, sorted(tracker.value)[: args.changes], args.change_rate
        )
        latencies = [done - at for at, done in changed.values()]
        after = [await queue_buckets(shard) for shard in shards]
        out["changes"] = len(latencies)
        out["time_to_desired_p50_s"] = round(percentile(latencies, 0.5), 3)
        out["time_to_desired_p99_s"] = round(percentile(latencies, 0.99), 3)
        summed_before: dict[float, float] = {}
        summed_after: dict[float, float] = {}
        for buckets, summed in ((before, summed_before), (after, summed_after)):
            for one in buckets:
                for bound, count in one.items():
                    summed[bound] = summed.get(bound, 0.0) + count
        out["queue_time_p99_s"] = p99_of_buckets(summed_before, summed_after)
        if size >= 2:
            victim = next(s for s in shards if s.shard != sharder)
            moving = {n for n, s in tracker.labels.items() if s == victim.shard}
            victim.process.send_signal(signal.SIGKILL)
            await victim.process.wait()
            killed = time.perf_counter()
            shards.remove(victim)
            live = {shard.shard for shard in shards}
            # Changes to the dead shard's objects, made while no one owns them: each is
            # reconciled once a survivor has taken the object over.
            probes = sorted(moving)[: args.death_changes]
            after_death = await change(client, tracker, namespace, probes, args.death_change_rate)
            await until(
                lambda: all(tracker.labels.get(n) in live for n in moving),
                args.lease_duration * 4 + 120,
                "the dead shard's objects moved",
            )
            out["death"] = {
                "killed": victim.shard,
                "moved": len(moving),
                "changed": len(probes),
                "rebalance_s": round(max(done for _, done in after_death.values()) - killed, 2),
                "first_taken_over_s": round(min(d for _, d in after_death.values()) - killed, 2),
                "taken_over_p50_s": round(
                    percentile([d - killed for _, d in after_death.values()], 0.5), 2
                ),
                "relabelled_s": round(max(tracker.label_at[n] for n in moving) - killed, 2),
                "lease_duration_s": args.lease_duration,
                "target_s": args.lease_duration + 2,
            }
    finally:
        for shard in [*shards, *([sharder_apart] if sharder_apart is not None else [])]:
            await stop(shard)
        await tracker.informer.stop()
    return out


async def sharder_alone(plane: ControlPlane, client: Client, args: argparse.Namespace) -> Any:
    namespace = "shard-bench-alone"
    await plane.create_namespace(namespace)
    await create_objects(client, namespace, args.objects)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent)])}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(HERE / "_sharder_alone.py"),
        str(plane.kubeconfig_path),
        namespace,
        str(args.objects),
        str(round(args.lease_duration)),
        env=env,
        stdout=asyncio.subprocess.PIPE,
    )
    output, _ = await asyncio.wait_for(process.communicate(), 1800)
    if process.returncode != 0:
        return {"error": f"exited with {process.returncode}"}
    return json.loads(output)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {
        "objects": args.objects,
        "workers_per_shard": WORKERS,
        "lease_duration_s": args.lease_duration,
        "loadavg_start": [round(v, 2) for v in os.getloadavg()],
    }
    async with ControlPlane() as plane:
        await plane.install_crds([CRD])
        log = Path(plane.workdir) / "shards.log"
        async with Client.from_control_plane(plane) as client:
            baseline = await baseline_rss(plane, args.lease_duration, log)
            result["empty_shard_rss_mb"] = round(baseline, 1)
            rings: dict[str, Any] = {}
            for size in args.shards:
                rings[str(size)] = await ring_run(plane, client, size, args, baseline, log)
                print(f"ring of {size}: done", file=sys.stderr)
            if args.apart:
                rings[f"{args.apart}+sharder"] = await ring_run(
                    plane, client, args.apart, args, baseline, log, apart=True
                )
                print(f"ring of {args.apart} and a sharder apart: done", file=sys.stderr)
            result["rings"] = rings
            if "1" in rings:
                single = rings["1"]["shards"]["s0"]["cache_mb"]
                for ring in rings.values():
                    for shard in ring["shards"].values():
                        shard["cache_vs_singleton"] = (
                            round(shard["cache_mb"] / single, 3) if single > 0 else None
                        )
            result["sharder_alone"] = await sharder_alone(plane, client, args)
    result["loadavg_end"] = [round(v, 2) for v in os.getloadavg()]
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--shards", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--lease-duration", type=float, default=15.0)
    parser.add_argument(
        "--apart",
        type=int,
        default=3,
        help="also a ring of this many shards with the sharder in a replica of its own "
        "(--shard-role shard / sharder); 0: not",
    )
    parser.add_argument("--changes", type=int, default=1000)
    parser.add_argument("--change-rate", type=float, default=100.0, help="changes a second")
    parser.add_argument(
        "--death-changes",
        type=int,
        default=1000,
        help="changes to the dead shard's objects right after its death",
    )
    parser.add_argument("--death-change-rate", type=float, default=200.0)
    parser.add_argument("--json", action="store_true", help="print only the JSON object")
    arguments = parser.parse_args()
    if arguments.objects < 1 or any(size < 1 for size in arguments.shards):
        parser.error("--objects and --shards must be at least 1")
    if arguments.lease_duration < 3:
        parser.error("--lease-duration must be at least 3 (seconds)")
    outcome = asyncio.run(main(arguments))
    print(json.dumps(outcome) if arguments.json else json.dumps(outcome, indent=2))
