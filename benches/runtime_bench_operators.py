"""The two equivalent operators that ``runtime_bench.py`` races: crdkit and kopf.

Each watches ``RuntimeBenchItem`` objects and, for each one, writes ``status.observed =
spec.value`` through the status subresource: one status write per object, nothing else (no
Events, no finalizers). kopf is imported only by the kopf operator's process, so neither
process carries the other framework.

    crdkit run benches/runtime_bench_operators.py:BenchReconciler -n NS ...
    kopf run --standalone -n NS benches/runtime_bench_operators.py   (with CRDKIT_BENCH_KOPF=1)
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import Field

from crdkit import Context, CustomResource, Reconciler
from crdkit.resources import ApiModel

GROUP, VERSION, KIND, PLURAL = "bench.crdkit.io", "v1", "RuntimeBenchItem", "runtimebenchitems"


class BenchSpec(ApiModel):
    value: int = Field(ge=0)


class BenchStatus(ApiModel):
    observed: int | None = None


class RuntimeBenchItem(CustomResource, group=GROUP, version=VERSION, kind=KIND, plural=PLURAL):
    spec: BenchSpec
    status: BenchStatus | None = None


class BenchReconciler(Reconciler[RuntimeBenchItem]):
    name = "runtime-bench"

    async def reconcile(self, ctx: Context, obj: RuntimeBenchItem) -> None:
        if obj.status is not None and obj.status.observed == obj.spec.value:
            return
        obj.status = BenchStatus(observed=obj.spec.value)
        await ctx.update_status(obj)


if os.environ.get("CRDKIT_BENCH_KOPF") == "1":  # pragma: no cover - runs inside `kopf run`
    import kopf

    @kopf.on.startup()
    def _configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.posting.enabled = False  # crdkit's side records no Events either

    @kopf.on.create(GROUP, VERSION, PLURAL)
    @kopf.on.resume(GROUP, VERSION, PLURAL)
    def _observe(spec: Any, patch: Any, **_: Any) -> None:
        patch.status["observed"] = spec["value"]
