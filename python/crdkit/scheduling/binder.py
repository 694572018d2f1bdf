"""All-or-nothing binding of a gang's pods, with the mirror's assumptions kept right.

A decision is made real in two steps, so that no other decision can hand out the same room in
between:

1. ``reserve`` (synchronous, right after the placement, before any ``await``) counts every pod
   of the gang on its node in the `ClusterMirror`;
2. ``bind`` (pods that exist, as kube-scheduler binds them: ``pods/<name>/binding``) or
   ``create_bound`` (pods the operator creates itself, with ``spec.nodeName`` set) runs the API
   calls concurrently. A `GangGate` admits a whole gang's calls at once, gangs in arrival
   order, so one gang's calls never queue behind another's and it is not left partly bound
   while others bind.

A call whose answer was lost (the connection broke after it was sent) is judged by reading
the pod back: bound to its node, it counts as made. If any call of step 2 fails, every pod
bound or created in that attempt is deleted (grace 0: its containers have not started in any
meaningful way, and its owner makes it again), every assumption is released, and `BindError`
says what failed and what could not be undone. A gang is never left partly bound by this
module.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crdkit.client import NotFound, Preconditions, TransportError
from crdkit.resources import Pod
from crdkit.scheduling.assumptions import PodBinding, Reservation, assume
from crdkit.scheduling.errors import SchedulingError
from crdkit.scheduling.gang_gate import GangGate

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from crdkit.client import Client
    from crdkit.scheduling.mirror import ClusterMirror

__all__ = ["BindError", "Binder"]

log = logging.getLogger("crdkit.scheduling.binder")


@dataclass
class BindError(SchedulingError):
    """A gang's bind failed and was rolled back. ``failures``: pod key to the error of its
    call; ``not_undone``: pods that were bound or created but could not be deleted again."""

    failures: dict[str, BaseException]
    not_undone: dict[str, BaseException] = field(default_factory=dict)

    def __str__(self) -> str:
        key, error = next(iter(sorted(self.failures.items())))
        more = f" (and {len(self.failures) - 1} more)" if len(self.failures) > 1 else ""
        text = f"binding {key} failed: {error}{more}; the gang was rolled back"
        if self.not_undone:
            text += f", but {', '.join(sorted(self.not_undone))} could not be deleted"
        return text


class Binder:
    """Binds gangs through ``client`` and keeps ``mirror``'s assumptions; see the module
    docstring. ``concurrency`` caps the API calls in flight across all gangs; a gang takes its
    share of them all at once (`GangGate`)."""

    def __init__(
        self,
        client: Client,
        mirror: ClusterMirror,
        *,
        concurrency: int = 32,
        field_manager: str = "crdkit-scheduler",
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency: must be at least 1, got {concurrency}")
        self.client = client
        self.mirror = mirror
        self.field_manager = field_manager
        self._gate = GangGate(concurrency)

    def reserve(self, bindings: Sequence[PodBinding]) -> Reservation:
        """Count every pod on its node now (all or nothing: a node the mirror lacks raises
        ``ValueError`` and counts none)."""
        return assume(self.mirror, bindings)

    def release(self, reservation: Reservation) -> None:
        """Give a reservation's room back without binding anything."""
        if not reservation.done:
            reservation.done = True
            for binding in reservation.bindings:
                self.mirror.forget_pod(binding.key)

    async def bind(self, reservation: Reservation) -> None:
        """Bind every reserved pod (they exist and are pending); all or nothing."""

        async def call(binding: PodBinding) -> None:
            await self.client.bind(
                binding.name,
                binding.node,
                namespace=binding.namespace,
                uid=binding.uid,
                field_manager=self.field_manager,
            )

        await self._run(reservation, call)

    async def create_bound(
        self, reservation: Reservation, pods: Mapping[str, Pod | dict[str, Any]]
    ) -> None:
        """Create the reserved pods already bound: ``pods`` maps each binding's key to its
        manifest, whose ``spec.nodeName`` is set to the reserved node here."""
        missing = [b.key for b in reservation.bindings if b.key not in pods]
        if missing:
            self.release(reservation)
            raise ValueError(f"pods: no manifest for {', '.join(missing)}")

        async def call(binding: PodBinding) -> None:
            manifest = pods[binding.key]
            if isinstance(manifest, Pod):
                pod = manifest.model_copy(deep=True)
                pod.spec.node_name = binding.node
                await self.client.create(pod, field_manager=self.field_manager)
            else:
                body = {**manifest, "spec": {**manifest.get("spec", {}), "nodeName": binding.node}}
                await self.client.create(Pod.model_validate(body), field_manager=self.field_manager)

        await self._run(reservation, call)

    async def _run(self, reservation: Reservation, call: Any) -> None:
        if reservation.done:
            raise RuntimeError("this reservation was already bound or released")
        made: list[PodBinding] = []
        failures: dict[str, BaseException] = {}

        async def one(binding: PodBinding, slots: asyncio.Semaphore) -> None:
            async with slots:
                if failures:
                    return  # the attempt has failed already: no more calls
                try:
                    await call(binding)
                except TransportError as error:
                    # No answer: the call may have been applied all the same (the connection
                    # broke after the server took it). Rolled back as failed, that pod stayed:
                    # the gang was left partly made (crash tests: lost-response on a create,
                    # and on the last bind of a gang, which left one pod bound alone). Ask the
                    # server what happened instead.
                    if await self._applied(binding):
                        made.append(binding)
                    else:
                        failures[binding.key] = error
                except Exception as error:
                    failures[binding.key] = error
                else:
                    made.append(binding)

        try:
            async with self._gate.admit(len(reservation.bindings)) as held:
                slots = asyncio.Semaphore(held)  # only a gang larger than the gate waits here
                await asyncio.gather(*(one(b, slots) for b in reservation.bindings))
        except BaseException:
            # Cancelled mid-attempt: whatever was made must still be undone.
            await asyncio.shield(self._undo(reservation, made))
            raise
        if failures:
            not_undone = await self._undo(reservation, made)
            log.warning(
                "gang bind failed; rolled back %d pods",
                len(made),
                extra={"fields": {"failed": sorted(failures), "not_undone": sorted(not_undone)}},
            )
            raise BindError(failures, not_undone)
        reservation.done = True
        for binding in reservation.bindings:
            self.mirror.binding_finished(binding.key)

    async def _applied(self, binding: PodBinding) -> bool:
        """Whether ``binding``'s pod is on its node (its uid, if the binding names one)."""
        try:
            pod = await self.client.get(Pod, binding.name, namespace=binding.namespace)
        except Exception:
            return False  # not there, or no more answer than before: failed, as it seemed
        if binding.uid and pod.metadata.uid != binding.uid:
            return False
        return pod.spec.node_name == binding.node

    async def _undo(
        self, reservation: Reservation, made: Sequence[PodBinding]
    ) -> dict[str, BaseException]:
        not_undone: dict[str, BaseException] = {}

        async def delete(binding: PodBinding) -> None:
            try:
                await self.client.delete(
                    Pod,
                    binding.name,
                    namespace=binding.namespace,
                    grace_period_seconds=0,
                    preconditions=Preconditions(uid=binding.uid) if binding.uid else None,
                )
            except NotFound:
                pass
            except Exception as error:
                not_undone[binding.key] = error

        await asyncio.gather(*(delete(b) for b in made))
        self.release(reservation)
        return not_undone
