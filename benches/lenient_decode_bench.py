"""Per-item list decoding: strict (``decode_item``, raises) against lenient (``try_decode``).

    python benches/lenient_decode_bench.py --objects 10000 --rounds 12

The informer decodes list items with ``try_decode``, so that one object the model refuses
cannot fail the page; this checks that the valid path costs no more than the strict one did.
Both run over the same N training-job items (informer_bench's objects, about 1.5 KB of JSON
each) in one process, alternating which goes first each round, with the collector paused as
the informer pauses it; the best round of each is reported (best, not mean: on a loaded host
the other processes only ever add time). Output: one JSON object; ``lenient_vs_strict`` below 1
means the lenient path is faster.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from crdkit.client.codec import InvalidObject, ModelCodec, codec_for, paused_gc

sys.path.insert(0, str(Path(__file__).resolve().parent))

from informer_bench import bench_job_model, job_body

BenchJob = bench_job_model()


def strict(codec: ModelCodec[BenchJob], items: list[bytes]) -> int:
    decoded = 0
    for index, raw in enumerate(items):
        codec.decode_item(raw, index)
        decoded += 1
    return decoded


def lenient(codec: ModelCodec[BenchJob], items: list[bytes]) -> int:
    decoded = 0
    for raw in items:
        if not isinstance(codec.try_decode(raw), InvalidObject):
            decoded += 1
    return decoded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000, help="items per round")
    parser.add_argument("--rounds", type=int, default=12, help="rounds per path; best is kept")
    args = parser.parse_args()
    if args.objects < 1 or args.rounds < 1:
        parser.error("--objects and --rounds must be at least 1")
    items = [
        json.dumps(job_body("ns", i), separators=(",", ":")).encode() for i in range(args.objects)
    ]
    codec = codec_for(BenchJob)
    paths: dict[str, Callable[[ModelCodec[BenchJob], list[bytes]], int]] = {
        "strict": strict,
        "lenient": lenient,
    }
    best = dict.fromkeys(paths, float("inf"))
    for round_ in range(args.rounds):
        order = list(paths) if round_ % 2 else list(reversed(paths))
        for name in order:
            with paused_gc():
                started = time.perf_counter()
                decoded = paths[name](codec, items)
                best[name] = min(best[name], time.perf_counter() - started)
            if decoded != len(items):
                raise SystemExit(f"{name}: decoded {decoded} of {len(items)} items")
    result = {
        "objects": args.objects,
        "rounds": args.rounds,
        "strict_ms": round(best["strict"] * 1000, 1),
        "lenient_ms": round(best["lenient"] * 1000, 1),
        "lenient_vs_strict": round(best["lenient"] / best["strict"], 3),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
