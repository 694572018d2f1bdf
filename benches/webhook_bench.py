"""Admission reviews per second through crdkit's webhook server, on loopback TLS.

    python benches/webhook_bench.py --reviews 600 --concurrency 8

A validator and a defaulter on a small kind; an aiohttp client in the same process POSTs
``--reviews`` AdmissionReviews to each path, ``--concurrency`` at a time. Every answer closes
its connection (the server's design, for restarts that lose nothing), so each review pays a TLS
handshake: this is the figure the apiserver sees. Output: one JSON object per path.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import ssl
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from crdkit import ApiModel, CustomResource
from crdkit.runtime import AdmissionContext, Defaulter, Validator, Webhook
from crdkit.webhook.certs import CertWatcher, write_self_signed
from crdkit.webhook.server import WebhookServer


class PartSpec(ApiModel):
    size: int = 1
    color: str | None = None


class Part(CustomResource, group="bench.example.com", version="v1", kind="Part"):
    spec: PartSpec


class PartValidator(Validator[Part]):
    async def validate_create(self, ctx: AdmissionContext, obj: Part) -> list[str] | None:
        return ["large"] if obj.spec.size > 5 else None


class PartDefaulter(Defaulter[Part]):
    async def default(self, ctx: AdmissionContext, obj: Part) -> None:
        obj.spec.color = obj.spec.color or "grey"


def _review(index: int) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": str(index),
            "operation": "CREATE",
            "name": f"p{index}",
            "namespace": "bench",
            "object": {
                "apiVersion": "bench.example.com/v1",
                "kind": "Part",
                "metadata": {"name": f"p{index}", "namespace": "bench"},
                "spec": {"size": index % 10},
            },
        },
    }


async def main(reviews: int, concurrency: int) -> None:
    certs = Path(tempfile.mkdtemp(prefix="webhook-bench-"))
    write_self_signed(certs, ["127.0.0.1"])
    webhook = Webhook(Part, validator=PartValidator(), defaulter=PartDefaulter())
    server = WebhookServer([webhook], CertWatcher(certs).context)
    await server.start("127.0.0.1", 0)
    context = ssl.create_default_context(cafile=str(certs / "ca.crt"))
    gate = asyncio.Semaphore(concurrency)
    try:
        async with aiohttp.ClientSession() as session:

            async def one(path: str, index: int) -> None:
                url = f"https://127.0.0.1:{server.port}{path}"
                async with gate, session.post(url, json=_review(index), ssl=context) as response:
                    assert response.status == 200, response.status
                    await response.read()

            for path in (webhook.validate_path, webhook.mutate_path):
                started = time.perf_counter()
                await asyncio.gather(*(one(path, i) for i in range(reviews)))
                wall = time.perf_counter() - started
                result = {"path": path, "reviews": reviews, "concurrency": concurrency}
                print(json.dumps(result | {"reviews_per_s": round(reviews / wall)}))
    finally:
        await server.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    asyncio.run(main(args.reviews, args.concurrency))
