"""``SimulatedKubelet``: the kubelets of simulated nodes, played just far enough for tests.

Nothing runs a kubelet next to the local control plane, so a bound pod stays ``Pending``
forever and no workload ever ends. This plays the status changes a kubelet makes, through the
pods' status subresource as a kubelet does (so a scheduler or controller under test sees only
their effect in the API):

- a pod bound to one of its nodes is reported ``Running`` (its containers started at once,
  each with a container status, so ``kubectl get pods`` reads ``1/1 Running``);
- `finish` reports pods ``Succeeded`` or ``Failed``, when the test says so, so that tests
  drive phases by order and never by waiting;
- ``run_for`` (optional) finishes each started pod after that many seconds, for demos;
- a pod deleted with a grace period (as preemption and controllers delete) is removed once its
  containers have exited, which here is at once, as a kubelet removes it; without this it would
  stay ``Terminating`` for ever.

Everything is keyed by the pod's uid: a report about a pod is refused by the apiserver if the
name now holds another pod (one its controller made again under the same name).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from crdkit.client import (
    Conflict,
    Invalid,
    KubernetesError,
    NotFound,
    PatchType,
    Preconditions,
)
from crdkit.resources import Pod

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Iterable

    from crdkit.client import Client

__all__ = [
    "RUN_SECONDS_ANNOTATION",
    "SimulatedKubelet",
    "annotated_run_time",
    "running_status",
    "terminated_status",
]

RUN_SECONDS_ANNOTATION = "sim.crdkit.io/run-seconds"
"""A pod's own run time on a simulated node, in seconds (see `annotated_run_time`)."""


def annotated_run_time(default: float | None = None) -> Callable[[Pod], float | None]:
    """A ``run_for`` for `SimulatedKubelet`: the pod's `RUN_SECONDS_ANNOTATION` when it has
    one, else ``default`` (None: it runs until it is deleted or `SimulatedKubelet.finish`
    ends it). An annotation that is not a non-negative number is ignored, and the pod runs
    for ``default``: a simulated kubelet does not judge the workloads it plays."""

    def run_for(pod: Pod) -> float | None:
        text = (pod.metadata.annotations or {}).get(RUN_SECONDS_ANNOTATION)
        if text is None:
            return default
        try:
            seconds = float(text)
        except ValueError:
            return default
        return seconds if seconds >= 0 and seconds != float("inf") else default

    return run_for


def _stamp(epoch: float | None = None) -> str:
    """An API timestamp (whole seconds, as the apiserver keeps them) of ``epoch`` (default: now)."""
    moment = datetime.now(UTC) if epoch is None else datetime.fromtimestamp(epoch, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def running_status(pod: Pod | None = None, *, at: float | None = None) -> dict[str, Any]:
    """The status patch a kubelet sends once a pod's containers run (with ``pod``, a ready
    status for each of its containers), dated ``at`` (epoch seconds; default: now)."""
    now = _stamp(at)
    status: dict[str, Any] = {
        "phase": "Running",
        "startTime": now,
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
            {"type": "Ready", "status": "True", "lastTransitionTime": now},
        ],
    }
    if pod is not None:
        status["containerStatuses"] = [
            {
                "name": container.name,
                "image": container.image or "",
                "imageID": "",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": now}},
            }
            for container in pod.spec.containers
        ]
    return {"status": status}


def terminated_status(
    phase: Literal["Succeeded", "Failed"], *, at: float | None = None
) -> dict[str, Any]:
    """The status patch a kubelet sends once every container exited (0 for ``Succeeded``),
    dated ``at`` (epoch seconds; default: now)."""
    reason = "PodCompleted" if phase == "Succeeded" else "PodFailed"
    return {
        "status": {
            "phase": phase,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "False",
                    "reason": reason,
                    "lastTransitionTime": _stamp(at),
                }
            ],
        }
    }


class SimulatedKubelet:
    """Starts the pods bound to the nodes it plays; see the module docstring.

    ``nodes`` (a predicate on the node name; default: every node) says which nodes are
    simulated, ``namespace`` limits the pods it watches, ``run_for(pod)`` gives a started pod's
    run time in seconds (None: until `finish`), ``on_start(pod)`` is told of every pod it
    starts, ``wall_clock`` (epoch seconds) dates what it reports: a simulation on a virtual
    clock passes its own, so that the start times it reports agree with the time it runs on.
    Use it as an async context manager.
    """

    def __init__(
        self,
        client: Client,
        *,
        namespace: str | None = None,
        nodes: Callable[[str], bool] | None = None,
        label_selector: str | None = None,
        run_for: Callable[[Pod], float | None] | None = None,
        on_start: Callable[[Pod], None] | None = None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.label_selector = label_selector
        self._nodes = nodes
        self._run_for = run_for
        self._on_start = on_start
        self._wall_clock = wall_clock
        self._started: set[str] = set()
        self._removing: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._watching: asyncio.Task[None] | None = None

    async def __aenter__(self) -> SimulatedKubelet:
        version = await self._list()
        self._watching = asyncio.create_task(self._watch(version))
        return self

    async def __aexit__(self, *_: object) -> None:
        tasks = [*self._tasks, *([self._watching] if self._watching else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _list(self) -> str | None:
        listing = await self.client.list(
            Pod, namespace=self.namespace, label_selector=self.label_selector
        )
        for pod in listing.items:
            self._seen(pod)
        return listing.resource_version

    async def _watch(self, version: str | None) -> None:
        # A plain list and watch (a test kit stays below the runtime): any error relists.
        while True:
            try:
                async for event in self.client.watch(
                    Pod,
                    namespace=self.namespace,
                    label_selector=self.label_selector,
                    resource_version=version,
                ):
                    version = event.resource_version or version
                    if event.type in ("ADDED", "MODIFIED") and event.object is not None:
                        self._seen(event.object)
            except KubernetesError:
                await asyncio.sleep(0.5)
                version = await self._list()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _seen(self, pod: Pod) -> None:
        node = pod.spec.node_name
        phase = pod.status.phase if pod.status else None
        key = f"{pod.metadata.namespace}/{pod.metadata.name}/{pod.metadata.uid}"
        if not node or (self._nodes is not None and not self._nodes(node)):
            return
        if pod.metadata.deletion_timestamp is not None:
            if key not in self._removing:
                self._removing.add(key)
                self._spawn(self._remove(pod))
            return
        if phase not in (None, "Pending") or key in self._started:
            return
        self._started.add(key)
        if self._on_start is not None:
            self._on_start(pod)
        seconds = self._run_for(pod) if self._run_for is not None else None
        self._spawn(self._run(pod, seconds))

    async def _run(self, pod: Pod, seconds: float | None) -> None:
        # The end is reported only once the start has landed: sent side by side, a loaded
        # machine could deliver them in either order, and a pod's phase never leaves Succeeded.
        await self._patch(pod, running_status(pod, at=self._wall_clock()))
        if seconds is not None:
            await asyncio.sleep(seconds)
            await self._patch(pod, terminated_status("Succeeded", at=self._wall_clock()))

    async def _remove(self, pod: Pod) -> None:
        """What a kubelet does once a deleted pod's containers exited: remove it for good
        (grace 0), only if the name still holds this pod."""
        with contextlib.suppress(NotFound, Conflict):  # gone, or a new pod of that name
            await self.client.delete(
                Pod,
                pod.metadata.name or "",
                namespace=pod.metadata.namespace,
                grace_period_seconds=0,
                preconditions=Preconditions(uid=pod.metadata.uid),
            )

    async def _patch(self, pod: Pod, body: dict[str, Any]) -> None:
        # The uid in the patch is the precondition: if the name now holds another pod, the
        # apiserver refuses the report (422, metadata.uid is immutable) rather than apply it to
        # the pod that took the name.
        if pod.metadata.uid:
            body = {**body, "metadata": {"uid": pod.metadata.uid}}
        with contextlib.suppress(NotFound, Invalid):  # gone, or another pod holds the name
            await self.client.patch(
                Pod,
                pod.metadata.name or "",
                body,
                namespace=pod.metadata.namespace,
                subresource="status",
                # As a kubelet patches: conditions merge by type, so one another component
                # wrote (a scheduler's DisruptionTarget) is kept beside Ready and the rest.
                patch_type=PatchType.STRATEGIC,
            )

    async def finish(
        self, pods: Iterable[Pod], phase: Literal["Succeeded", "Failed"] = "Succeeded"
    ) -> None:
        """Report ``pods`` ended in ``phase`` (all their containers exited)."""
        status = terminated_status(phase, at=self._wall_clock())
        await asyncio.gather(*(self._patch(pod, status) for pod in pods))
