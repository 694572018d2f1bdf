"""What the scheduler benches read of `crdkit scheduler`'s view while it runs: the starts it
promised, from the queue it publishes (`crdkit.scheduling.view.publish`), and the page's
update stream (``--ui``), as one open page reads it; and a process's CPU time.

- Promises: every start the published queue lists (the last 256 of each write, unioned by
  gang) gives the share kept (started in the first pass at or after the first promise, as the
  scheduler judged it) and the lateness ``actual - promised``: mean and p95 (negative: early).
- The page: the size of the first (full) event and of each delta after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from _job_stream import percentile
from crdkit.client import Client
from crdkit.resources import ConfigMap
from crdkit.runtime.informer import Informer
from crdkit.scheduling.view.format import PUBLISHED_KEY, published_name

__all__ = ["PageReader", "PromiseWatch", "cpu_seconds"]


def cpu_seconds(pid: int) -> float | None:
    """User and system CPU time of process ``pid`` so far (Linux), None if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class PromiseWatch:
    """The starts the scheduler ``scheduler`` published in ``namespace``."""

    client: Client
    scheduler: str
    namespace: str = "default"
    starts: dict[str, dict[str, Any]] = field(default_factory=dict)

    def _seen(self, made: ConfigMap) -> None:
        if made.metadata.name != published_name(self.scheduler):
            return
        text = (made.data or {}).get(PUBLISHED_KEY)
        if text is None:
            return
        for record in json.loads(text).get("starts", ()):
            self.starts.setdefault(record["gang"], record)

    @contextlib.asynccontextmanager
    async def watching(self) -> Any:
        informer = Informer(self.client, ConfigMap, namespace=self.namespace)
        informer.add_event_handler(self._seen, lambda _old, new: self._seen(new))
        async with informer:
            yield self

    def figures(self) -> dict[str, Any]:
        records = list(self.starts.values())
        late = [r["actual"] - r["promised"] for r in records]
        return {
            "promised_starts": len(records),
            "kept_pct": (
                round(100 * sum(r["kept"] for r in records) / len(records), 1) if records else None
            ),
            "late_mean_s": round(sum(late) / len(late), 2) if late else None,
            "late_p95_s": round(percentile(late, 0.95), 2) if late else None,
        }


@dataclass
class PageReader:
    """One open page: reads the update stream at ``url`` (``/events``) until cancelled."""

    url: str
    sizes: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    async def read(self) -> None:
        while True:
            try:
                async with (
                    aiohttp.ClientSession() as session,
                    session.get(self.url, timeout=aiohttp.ClientTimeout(total=None)) as answer,
                ):
                    size, data = 0, False
                    async for line in answer.content:
                        size += len(line)
                        data = data or line.startswith(b"data:")
                        if line in (b"\n", b"\r\n"):  # an event ends (a heartbeat has no data)
                            if data:
                                self.sizes.append(size)
                            size, data = 0, False
            except (aiohttp.ClientError, OSError) as error:
                self.errors.append(str(error))
                await asyncio.sleep(1.0)

    def figures(self) -> dict[str, Any]:
        deltas = self.sizes[1:]
        return {
            "page_events": len(self.sizes),
            "page_first_bytes": self.sizes[0] if self.sizes else None,
            "page_delta_median_bytes": int(percentile([float(d) for d in deltas], 0.5))
            if deltas
            else None,
            "page_delta_p95_bytes": int(percentile([float(d) for d in deltas], 0.95))
            if deltas
            else None,
            "page_bytes": sum(self.sizes),
            "page_errors": len(self.errors),
        }
