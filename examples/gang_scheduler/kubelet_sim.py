"""The kubelets of the simulated nodes, played just far enough for the demo.

`crdkit.testing.SimulatedKubelet` reports a bound pod ``Running`` (as if its containers started
at once); this adds the demo's script: once a job has run for its scripted time, every one of
its started pods is reported ``Succeeded``. Both go through the pods' status subresource, as a
kubelet's do; the scheduler only ever sees their effect in the API.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from crdkit.testing import SimulatedKubelet
from examples.gang_scheduler.pods import JOB_NAME_LABEL

if TYPE_CHECKING:
    from collections.abc import Mapping

    from crdkit.client import Client
    from crdkit.resources import Pod

log = logging.getLogger("examples.gang_scheduler.kubelet_sim")


class SimulatedKubelets:
    """Starts pods bound in ``namespace`` and finishes each job after ``run_for[job]`` seconds.

    A job missing from ``run_for`` (or mapped to None) runs until the simulation stops.
    """

    def __init__(self, client: Client, namespace: str, run_for: Mapping[str, float | None]) -> None:
        self.run_for = dict(run_for)
        self.kubelet = SimulatedKubelet(
            client, namespace=namespace, label_selector=JOB_NAME_LABEL, on_start=self._started
        )
        self._pods: dict[str, list[Pod]] = {}
        self._timers: dict[str, asyncio.Task[None]] = {}

    async def __aenter__(self) -> SimulatedKubelets:
        await self.kubelet.__aenter__()
        return self

    async def __aexit__(self, *_: object) -> None:
        for task in self._timers.values():
            task.cancel()
        await asyncio.gather(*self._timers.values(), return_exceptions=True)
        await self.kubelet.__aexit__()

    def _started(self, pod: Pod) -> None:
        job = pod.metadata.labels.get(JOB_NAME_LABEL, "")
        self._pods.setdefault(job, []).append(pod)
        seconds = self.run_for.get(job)
        if seconds is not None and job not in self._timers:
            self._timers[job] = asyncio.create_task(self._finish_after(job, seconds))

    async def _finish_after(self, job: str, seconds: float) -> None:
        await asyncio.sleep(seconds)
        pods = self._pods.get(job, [])
        log.info("job %s ran for %.1fs: its %d pods succeed", job, seconds, len(pods))
        await self.kubelet.finish(pods, "Succeeded")
