"""`StatusWriter`: brings a PodGroup's status in line with its pods, as a merge patch guarded by
the version it was made from.

Status writes run concurrently, and one made from an older read (a restart on a lagging
cache, a write decided before the gang was bound) must not land over a newer one: Kubernetes'
PodGroup keeps ``PodGroupInitiallyScheduled`` True for good once set, and a stale False that
landed after the gang's pods were gone stayed for good (the scheduler crash tests, ``stale``).
A write refused as made from an old version reads the PodGroup afresh and is made again from
it, once: waiting for the cache instead would wait for good where a watch event was lost (the
crash tests, ``unobserved``), and the status would never be written again.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from crdkit.client import Conflict, KubernetesError, NotFound, PatchType
from crdkit.scheduling.groups import GROUP_APIS

if TYPE_CHECKING:
    from crdkit.client import Client
    from crdkit.scheduling.pending import PendingGroup
    from crdkit.scheduling.reporting import Reporter

__all__ = ["StatusWriter"]

log = logging.getLogger("crdkit.scheduling.scheduler")


class StatusWriter:
    """See the module docstring; ``reporter`` says what the status should be."""

    def __init__(self, client: Client, reporter: Reporter) -> None:
        self._client = client
        self._reporter = reporter

    async def write(
        self, group: PendingGroup, waiting: tuple[str, str] | None, *, binding: bool
    ) -> None:
        """Write the status ``group``'s PodGroup should have now (nothing if it has it)."""
        ref = group.ref
        api = GROUP_APIS[ref.api]
        assert api.model is not None  # only a gang with a PodGroup has a status to write
        for last_try in (False, True):
            status = self._reporter.status_to_write(group, waiting, binding)
            if status is None or group.podgroup is None:
                return
            body: dict[str, Any] = {"status": status}
            version = group.podgroup.metadata.resource_version
            if version:
                body["metadata"] = {"resourceVersion": version}
            try:
                await self._client.patch(
                    api.model,
                    ref.name,
                    body,
                    namespace=ref.namespace,
                    patch_type=PatchType.MERGE,
                    # Volcano's PodGroup CRD has no status subresource: its status is the
                    # object's.
                    subresource="status" if api.status_subresource else None,
                )
                return
            except NotFound:
                return
            except Conflict:
                self._reporter.status_unwritten(ref)
                if last_try:
                    return  # changed again: its next event brings a fresh write
            except KubernetesError as error:
                self._reporter.status_unwritten(ref)
                log.warning("%s: could not write the PodGroup status: %s", ref, error)
                return
            try:
                group.podgroup = await self._client.get(
                    api.model, ref.name, namespace=ref.namespace
                )
            except NotFound:
                return
            except KubernetesError as error:
                log.warning("%s: could not read the PodGroup to write its status: %s", ref, error)
                return
