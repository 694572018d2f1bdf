"""Informer sync benchmark: crdkit's informer against kubernetes-asyncio and controller-runtime.

    python benches/informer_bench.py --objects 10000 --json

Creates N custom resources (a GPU training job with a pod template, about 1.5 KB of JSON each)
on a local control plane, then runs each contender in its own subprocess, one after the other,
so neither shares an interpreter, a heap or CPU time with the other:

- ``crdkit``: ``Informer`` over the typed ``BenchJob`` model with its defaults: paginated
  list (500) validated from raw bytes with pydantic-core, the next page requested before this
  one is decoded, uncompressed responses, objects kept as JSON in the compact store; then the
  watch.
- ``crdkit_watchlist``: the same informer with ``watch_list=True``: one watch with
  ``sendInitialEvents`` streams the objects as events and the bookmark that ends them, then
  goes on as the watch (``crdkit_watchlist_*``, ``watchlist_vs_list``).
- ``baseline``: kubernetes-asyncio's path to typed objects: ``CustomObjectsApi`` paginated list
  and ``watch.Watch().stream`` (the library decodes JSON to dicts), then its generated models
  (``V1ObjectMeta``, ``V1PodTemplateSpec``) through ``ApiClient``'s deserializer, stored.
- ``dicts`` (reported for context, not in the ratios): the same kubernetes-asyncio list and
  watch keeping the plain dicts, i.e. untyped.
- ``fetch`` (reported for context, not in the ratios): crdkit's client only receiving the
  same paginated, pipelined list and splitting each page into its items' JSON, decoding and
  storing nothing. Its time is about what the apiserver needs to produce the list, a floor
  under any client's sync; ``crdkit_sync_s`` minus ``fetch_only_s`` is what decoding and
  storing add on top of it.
- ``controller_runtime``: controller-runtime's cache (benches/controller_runtime_peer, Go, built
  here by its build.sh from the Go module proxy into ~/.cache/crdkit/bench-bin and skipped when
  up to date): ``cache.New`` limited to the namespace, the typed ``BenchJob`` (its template a
  ``corev1.PodTemplateSpec``), client-go's informer with its defaults (on this apiserver that is
  a streaming watch-list, not paginated lists), timed from asking for the informer to
  ``HasSynced``; then the same watch proof and memory figures (VmRSS after ``runtime.GC()``,
  VmHWM). Reported as ``controller_runtime_*`` and in ``crdkit_vs_controller_runtime`` (crdkit
  / controller-runtime; below 1: crdkit needs less); a peer that cannot be built or run is
  reported in ``controller_runtime_peer.error`` and the rest of the bench still runs.

Each side's sync time runs from the first list request to the whole list being stored; then
it proves its watch works (one object is patched and the change must arrive). RSS is the
subprocess's resident size after that, with a garbage collection first; ``*_peak_rss_mb`` is
the subprocess's peak; ``*_cache_mb`` is the growth of RSS over the sync (what holding the
objects costs, without the interpreter and imports that both sides pay before it). Each side
runs ``--repeat`` times, interleaved, and its best run is reported. Output: one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import go_peer

PEER_DIR = Path(__file__).resolve().parent / "controller_runtime_peer"
GROUP = "bench.crdkit.dev"
PLURAL = "benchjobs"
KIND = "BenchJob"
TOUCHED = "job-00000"

SCHEMA = {
    "type": "object",
    "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
}


def job_body(namespace: str, index: int) -> dict[str, Any]:
    name = f"job-{index:05d}"
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": KIND,
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"team": f"team-{index % 10}", "queue": "gpu"},
            "annotations": {"bench.crdkit.dev/index": str(index)},
        },
        "spec": {
            "minAvailable": 4,
            "replicas": 4,
            "queue": "gpu",
            "template": {
                "metadata": {"labels": {"job": name, "role": "worker"}},
                "spec": {
                    "schedulerName": "crdkit-gang",
                    "restartPolicy": "Never",
                    "nodeSelector": {"bench.crdkit.dev/accelerator": "h100"},
                    "tolerations": [
                        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
                    ],
                    "containers": [
                        {
                            "name": "trainer",
                            "image": "registry.example.com/train:1.0",
                            "command": ["python", "-m", "train"],
                            "args": ["--epochs", "10", "--shard", str(index)],
                            "env": [
                                {"name": "WORLD_SIZE", "value": "32"},
                                {"name": "MASTER_PORT", "value": "29500"},
                            ],
                            "resources": {
                                "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "8"},
                                "limits": {"nvidia.com/gpu": "8"},
                            },
                        }
                    ],
                },
            },
        },
    }


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- the contenders (each runs in its own subprocess) -----------------------------------------


def bench_job_model() -> Any:
    """The typed ``BenchJob`` (also benches/lenient_decode_bench.py's), made when called: the
    workers that do not use crdkit never import it."""
    from pydantic import Field

    from crdkit.resources import CustomResource, ObjectMeta, OpenModel, PodSpec

    class PodTemplate(OpenModel):
        metadata: ObjectMeta = Field(default_factory=ObjectMeta)
        spec: PodSpec = Field(default_factory=PodSpec)

    class BenchJobSpec(OpenModel):
        min_available: int = 0
        replicas: int = 0
        queue: str | None = None
        template: PodTemplate = Field(default_factory=PodTemplate)

    class BenchJob(CustomResource, group=GROUP, version="v1", kind=KIND):
        spec: BenchJobSpec

    return BenchJob


async def crdkit_worker(
    kubeconfig: str, namespace: str, expect: int, *, watch_list: bool = False
) -> dict[str, Any]:
    from crdkit.client import Client
    from crdkit.runtime.informer import Informer

    BenchJob = bench_job_model()
    async with await Client.from_kubeconfig(kubeconfig) as client:
        informer = Informer(
            client, BenchJob, namespace=namespace, resync_period=None, watch_list=watch_list
        )
        touched = asyncio.Event()
        mark = f"crdkit-{time.time_ns()}"

        def on_update(old: BenchJob, new: BenchJob) -> None:
            if new.metadata.name == TOUCHED and new.metadata.labels.get("touched") == mark:
                touched.set()

        informer.add_event_handler(on_update=on_update)
        rss_before = rss_mb()
        started = time.perf_counter()
        await informer.start()
        await informer.wait_for_sync()
        sync_s = time.perf_counter() - started
        if len(informer.store) != expect:
            raise RuntimeError(f"crdkit stored {len(informer.store)} objects, expected {expect}")
        if watch_list and informer.stream_count != 1:
            raise RuntimeError("crdkit_watchlist did not stream its list (the apiserver refused)")
        sample = informer.store.get(f"{namespace}/{TOUCHED}")
        if sample is None or sample.spec.template.spec.containers[0].name != "trainer":
            raise RuntimeError(f"crdkit stored an unexpected object: {sample!r:.300}")
        await client.patch(
            BenchJob, TOUCHED, {"metadata": {"labels": {"touched": mark}}}, namespace=namespace
        )
        await asyncio.wait_for(touched.wait(), 60)
        gc.collect()
        result = {"sync_s": sync_s, "rss_mb": rss_mb(), "peak_rss_mb": peak_rss_mb()}
        result["rss_before_mb"] = rss_before
        await informer.stop()
        return result


async def kubernetes_asyncio_worker(
    kubeconfig: str, namespace: str, expect: int, *, typed: bool
) -> dict[str, Any]:
    from kubernetes_asyncio import client as k8s
    from kubernetes_asyncio import config, watch

    api_client = await config.new_client_from_config(config_file=kubeconfig)
    api = k8s.CustomObjectsApi(api_client)
    deserialize = api_client._ApiClient__deserialize  # the generated-model deserializer

    def convert(item: dict[str, Any]) -> Any:
        if not typed:
            return item
        spec = dict(item["spec"])
        spec["template"] = deserialize(spec["template"], "V1PodTemplateSpec")
        return {
            "apiVersion": item["apiVersion"],
            "kind": item["kind"],
            "metadata": deserialize(item["metadata"], "V1ObjectMeta"),
            "spec": spec,
        }

    store: dict[str, Any] = {}
    try:
        rss_before = rss_mb()
        started = time.perf_counter()
        token = None
        while True:
            kwargs: dict[str, Any] = {"limit": 500}
            if token:
                kwargs["_continue"] = token
            page = await api.list_namespaced_custom_object(GROUP, "v1", namespace, PLURAL, **kwargs)
            for item in page["items"]:
                meta = item["metadata"]
                store[f"{meta['namespace']}/{meta['name']}"] = convert(item)
            token = page["metadata"].get("continue")
            if not token:
                break
        version = page["metadata"]["resourceVersion"]
        sync_s = time.perf_counter() - started
        if len(store) != expect:
            raise RuntimeError(f"baseline stored {len(store)} objects, expected {expect}")
        label = f"{'typed' if typed else 'dicts'}-{time.time_ns()}"
        await api.patch_namespaced_custom_object(
            GROUP,
            "v1",
            namespace,
            PLURAL,
            TOUCHED,
            {"metadata": {"labels": {"touched": label}}},
            _content_type="application/merge-patch+json",
        )
        stream = watch.Watch().stream(
            api.list_namespaced_custom_object,
            GROUP,
            "v1",
            namespace,
            PLURAL,
            resource_version=version,
            allow_watch_bookmarks=True,
            timeout_seconds=60,
        )
        async for event in stream:
            obj = event["object"]
            meta = obj["metadata"]
            store[f"{meta['namespace']}/{meta['name']}"] = convert(obj)
            if meta["name"] == TOUCHED and (meta.get("labels") or {}).get("touched") == label:
                break
        else:
            raise RuntimeError("the baseline watch ended without the patched object")
        gc.collect()
        return {
            "sync_s": sync_s,
            "rss_mb": rss_mb(),
            "peak_rss_mb": peak_rss_mb(),
            "rss_before_mb": rss_before,
        }
    finally:
        await api_client.close()


async def fetch_worker(kubeconfig: str, namespace: str, expect: int) -> dict[str, Any]:
    from crdkit.client import Client, GroupVersionKind

    async with await Client.from_kubeconfig(kubeconfig) as client:
        target = await client.resolve(GroupVersionKind(GROUP, "v1", KIND))
        started = time.perf_counter()
        count = 0
        async for page in client.list_raw_pages(target, namespace=namespace):
            count += len(page.items)
        fetch_s = time.perf_counter() - started
    if count != expect:
        raise RuntimeError(f"fetch received {count} objects, expected {expect}")
    return {"sync_s": fetch_s}


def run_worker(args: argparse.Namespace) -> None:
    coroutine: Any
    if args.worker in ("crdkit", "crdkit_watchlist"):
        coroutine = crdkit_worker(
            args.kubeconfig,
            args.namespace,
            args.objects,
            watch_list=args.worker == "crdkit_watchlist",
        )
    elif args.worker == "fetch":
        coroutine = fetch_worker(args.kubeconfig, args.namespace, args.objects)
    else:
        coroutine = kubernetes_asyncio_worker(
            args.kubeconfig, args.namespace, args.objects, typed=args.worker == "baseline"
        )
    print(json.dumps(asyncio.run(coroutine)))


# -- the parent: control plane, objects, subprocesses ----------------------------------------


async def create_objects(plane: Any, namespace: str, count: int, concurrency: int) -> float:
    from crdkit.client import Client, GroupVersionKind, NotFound
    from crdkit.testing import crd_manifest

    started = time.perf_counter()
    async with Client.from_control_plane(plane) as client:
        crd = crd_manifest(GROUP, KIND, SCHEMA, plural=PLURAL)
        await client.apply(crd, field_manager="crdkit-bench", force=True)
        gvk = GroupVersionKind(GROUP, "v1", KIND)
        while True:
            client.discovery.invalidate()
            try:
                await client.resolve(gvk)
                break
            except NotFound:
                await asyncio.sleep(0.1)
        await plane.create_namespace(namespace)
        gate = asyncio.Semaphore(concurrency)

        async def create(index: int) -> None:
            async with gate:
                await client.create(job_body(namespace, index))

        await asyncio.gather(*(create(i) for i in range(count)))
    return time.perf_counter() - started


def worker_command(
    kind: str, kubeconfig: Path, namespace: str, count: int, peer: Path | None = None
) -> list[str]:
    """The subprocess of one contender: this file in ``--worker`` mode, or for
    ``controller_runtime`` the Go peer's ``informer`` subcommand."""
    # The flags both take (the Go peer mirrors this file's worker mode).
    shared = ["--kubeconfig", str(kubeconfig), "--namespace", namespace, "--objects", str(count)]
    if kind == "controller_runtime":
        if peer is None:
            raise ValueError("the controller-runtime worker needs the peer binary")
        return [
            str(peer),
            "informer",
            *shared,
            "--touched",
            TOUCHED,
            "--group",
            GROUP,
            "--api-version",
            "v1",
            "--kind",
            KIND,
        ]
    return [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        kind,
        *shared,
    ]


def measure(
    kind: str, kubeconfig: Path, namespace: str, count: int, peer: Path | None = None
) -> dict[str, Any]:
    command = worker_command(kind, kubeconfig, namespace, count, peer)
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} worker failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def best_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The least disturbed run: minimum sync time and minimum memory, each on its own.

    Other processes on the machine only ever add time and never remove it, so the minimum
    is the best estimate of each side's own cost; both sides get the same treatment.
    """
    return {key: min(run[key] for run in runs) for key in runs[0]}


def _ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 2) if denominator else None


def peer_fields(
    crdkit: dict[str, Any], runs: list[dict[str, Any]] | None, peer: dict[str, Any]
) -> dict[str, Any]:
    """The ``controller_runtime_*`` keys from the peer's runs (None or empty: it did not run;
    ``peer["error"]`` says why), its best run as for the other sides."""
    fields: dict[str, Any] = {"controller_runtime_peer": peer}
    if not runs:
        return fields
    best = best_of(runs)
    cache_mb = best["rss_mb"] - best["rss_before_mb"]
    crdkit_cache_mb = crdkit["rss_mb"] - crdkit["rss_before_mb"]
    fields.update(
        {
            "controller_runtime_sync_s": round(best["sync_s"], 3),
            "controller_runtime_rss_mb": round(best["rss_mb"], 1),
            "controller_runtime_peak_rss_mb": round(best["peak_rss_mb"], 1),
            "controller_runtime_rss_before_sync_mb": round(best["rss_before_mb"], 1),
            "controller_runtime_cache_mb": round(cache_mb, 1),
            "controller_runtime_heap_inuse_mb": round(best["heap_inuse_mb"], 1),
            "crdkit_vs_controller_runtime": {
                "sync": _ratio(crdkit["sync_s"], best["sync_s"]),
                "rss": _ratio(crdkit["rss_mb"], best["rss_mb"]),
                "peak_rss": _ratio(crdkit["peak_rss_mb"], best["peak_rss_mb"]),
                "cache": _ratio(crdkit_cache_mb, cache_mb),
            },
        }
    )
    return fields


async def bench(
    count: int, concurrency: int, repeat: int, with_peer: bool = True
) -> dict[str, Any]:
    from crdkit.testing import ControlPlane

    peer: dict[str, Any] = {"error": "not run (--no-controller-runtime)"}
    binary: Path | None = None
    if with_peer:
        binary, error = go_peer.build(PEER_DIR / "build.sh", "controller-runtime")
        if binary is None:
            peer = {"error": error}
            print(error, file=sys.stderr)
        else:
            peer = go_peer.version_info(binary)
    namespace = "bench"
    runs: dict[str, list[dict[str, Any]]] = {
        "crdkit": [],
        "crdkit_watchlist": [],
        "baseline": [],
        "dicts": [],
        "fetch": [],
    }
    if binary is not None:
        runs["controller_runtime"] = []
    async with ControlPlane() as plane:
        create_s = await create_objects(plane, namespace, count, concurrency)
        kubeconfig = plane.kubeconfig_path
        for _ in range(repeat):  # interleaved, so a burst of load hits every side alike
            for kind, results in runs.items():
                if kind == "controller_runtime" and "error" in peer:
                    continue
                try:
                    measured = await asyncio.to_thread(
                        measure, kind, kubeconfig, namespace, count, binary
                    )
                except RuntimeError as error:
                    if kind != "controller_runtime":
                        raise
                    peer = {**peer, "error": str(error)[-2000:]}
                    print(error, file=sys.stderr)
                    continue
                results.append(measured)
    crdkit, baseline, dicts = (best_of(runs[kind]) for kind in ("crdkit", "baseline", "dicts"))
    return {
        "objects": count,
        "crdkit_sync_s": round(crdkit["sync_s"], 3),
        "crdkit_rss_mb": round(crdkit["rss_mb"], 1),
        "crdkit_peak_rss_mb": round(crdkit["peak_rss_mb"], 1),
        "crdkit_rss_before_sync_mb": round(crdkit["rss_before_mb"], 1),
        "baseline_sync_s": round(baseline["sync_s"], 3),
        "baseline_rss_mb": round(baseline["rss_mb"], 1),
        "baseline_peak_rss_mb": round(baseline["peak_rss_mb"], 1),
        "baseline_rss_before_sync_mb": round(baseline["rss_before_mb"], 1),
        "sync_speedup": round(baseline["sync_s"] / crdkit["sync_s"], 2),
        "memory_ratio": round(baseline["rss_mb"] / crdkit["rss_mb"], 2),
        "crdkit_cache_mb": round(crdkit["rss_mb"] - crdkit["rss_before_mb"], 1),
        "baseline_cache_mb": round(baseline["rss_mb"] - baseline["rss_before_mb"], 1),
        "cache_memory_ratio": round(
            (baseline["rss_mb"] - baseline["rss_before_mb"])
            / (crdkit["rss_mb"] - crdkit["rss_before_mb"]),
            2,
        ),
        "peak_memory_ratio": round(baseline["peak_rss_mb"] / crdkit["peak_rss_mb"], 2),
        **watch_list_fields(crdkit, best_of(runs["crdkit_watchlist"])),
        "dicts_sync_s": round(dicts["sync_s"], 3),
        "dicts_rss_mb": round(dicts["rss_mb"], 1),
        "fetch_only_s": round(best_of(runs["fetch"])["sync_s"], 3),
        **peer_fields(crdkit, runs.get("controller_runtime"), peer),
        "create_s": round(create_s, 1),
        "repeat": repeat,
    }


def watch_list_fields(listed: dict[str, Any], streamed: dict[str, Any]) -> dict[str, Any]:
    """``crdkit_watchlist_*``: the same informer started from a streamed list, and its peak
    and cache beside the paged list's (``watchlist_vs_list``: streamed / listed)."""
    return {
        "crdkit_watchlist_sync_s": round(streamed["sync_s"], 3),
        "crdkit_watchlist_rss_mb": round(streamed["rss_mb"], 1),
        "crdkit_watchlist_peak_rss_mb": round(streamed["peak_rss_mb"], 1),
        "crdkit_watchlist_cache_mb": round(streamed["rss_mb"] - streamed["rss_before_mb"], 1),
        "watchlist_vs_list": {
            "sync": round(streamed["sync_s"] / listed["sync_s"], 2),
            "peak_rss": round(streamed["peak_rss_mb"] / listed["peak_rss_mb"], 2),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000, help="custom resources to create")
    parser.add_argument("--json", action="store_true", help="print one JSON object (default)")
    parser.add_argument("--concurrency", type=int, default=32, help="creates in flight")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per side (fresh subprocesses); best is kept"
    )
    parser.add_argument(
        "--no-controller-runtime",
        action="store_true",
        help="do not build or run the controller-runtime peer",
    )
    parser.add_argument(
        "--worker",
        choices=["crdkit", "crdkit_watchlist", "baseline", "dicts", "fetch"],
        help=argparse.SUPPRESS,
    )
    parser.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    parser.add_argument("--namespace", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.objects < 1:
        parser.error("--objects must be at least 1")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.worker:
        run_worker(args)
        return
    result = asyncio.run(
        bench(args.objects, args.concurrency, args.repeat, not args.no_controller_runtime)
    )
    print(json.dumps(result, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
