"""The kubelets of the simulated nodes, played just far enough for the demo.

No kubelet runs in the local control plane, so bound pods would stay ``Pending`` forever and no
job would ever end. This plays the two status changes a kubelet makes: a pod bound to a simulated
node is reported ``Running`` (as if its containers started at once), and once a job has run for
its scripted time every one of its pods is reported ``Succeeded``. Both go through the pods'
status subresource, as a kubelet's do; the scheduler only ever sees their effect in the API.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Mapping
from datetime import UTC, datetime
from typing import Any

from crdkit.client import Client, NotFound
from crdkit.resources import Pod
from crdkit.runtime import Informer
from examples.gang_scheduler.pods import JOB_NAME_LABEL

log = logging.getLogger("examples.gang_scheduler.kubelet_sim")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_running() -> dict[str, object]:
    """The status a kubelet reports once a pod's containers run."""
    now = _now()
    return {
        "status": {
            "phase": "Running",
            "startTime": now,
            "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
                {"type": "Ready", "status": "True", "lastTransitionTime": now},
            ],
        }
    }


def status_succeeded() -> dict[str, object]:
    """The status a kubelet reports once every container exited 0."""
    now = _now()
    return {
        "status": {
            "phase": "Succeeded",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "False",
                    "reason": "PodCompleted",
                    "lastTransitionTime": now,
                }
            ],
        }
    }


class SimulatedKubelets:
    """Starts pods bound in ``namespace`` and finishes each job after ``run_for[job]`` seconds.

    A job missing from ``run_for`` (or mapped to None) runs until the simulation stops.
    """

    def __init__(self, client: Client, namespace: str, run_for: Mapping[str, float | None]) -> None:
        self.client = client
        self.namespace = namespace
        self.run_for = dict(run_for)
        self.informer: Informer[Pod] = Informer(
            client, Pod, namespace=namespace, label_selector=JOB_NAME_LABEL
        )
        self._timers: dict[str, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.informer.add_event_handler(self._seen, lambda _old, new: self._seen(new), None)

    async def __aenter__(self) -> SimulatedKubelets:
        await self.informer.start()
        await self.informer.wait_for_sync()
        return self

    async def __aexit__(self, *_: object) -> None:
        for task in [*self._timers.values(), *self._tasks]:
            task.cancel()
        await asyncio.gather(*self._timers.values(), *self._tasks, return_exceptions=True)
        await self.informer.stop()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _seen(self, pod: Pod) -> None:
        phase = pod.status.phase if pod.status else None
        if (
            not pod.spec.node_name
            or phase not in (None, "Pending")
            or pod.metadata.deletion_timestamp
        ):
            return
        self._spawn(self._patch(pod.metadata.name or "", status_running()))
        job = pod.metadata.labels.get(JOB_NAME_LABEL, "")
        seconds = self.run_for.get(job)
        if seconds is not None and job not in self._timers:
            self._timers[job] = asyncio.create_task(self._finish_after(job, seconds))

    async def _patch(self, name: str, body: dict[str, object]) -> None:
        with contextlib.suppress(NotFound):
            await self.client.patch(Pod, name, body, namespace=self.namespace, subresource="status")

    async def _finish_after(self, job: str, seconds: float) -> None:
        await asyncio.sleep(seconds)
        pods = [
            pod
            for pod in self.informer.store.list()
            if pod.metadata.labels.get(JOB_NAME_LABEL) == job and pod.spec.node_name
        ]
        log.info("job %s ran for %.1fs: its %d pods succeed", job, seconds, len(pods))
        await asyncio.gather(
            *(self._patch(pod.metadata.name or "", status_succeeded()) for pod in pods)
        )
