"""Which PodGroup APIs a cluster serves, asked of its discovery documents: now, or, for a CRD
installed after the scheduler started, again every so often (`watch_for_pod_group_apis`)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from crdkit.client import GroupVersionKind, KubernetesError, NotFound
from crdkit.scheduling.groups import POD_GROUP_APIS, group_api, group_version

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Sequence

    from crdkit.client import Client
    from crdkit.scheduling.groups.api import PodGroupApi

__all__ = ["served_pod_group_apis", "watch_for_pod_group_apis"]

log = logging.getLogger(__name__)


async def served_pod_group_apis(
    client: Client, apis: Iterable[str] = POD_GROUP_APIS
) -> list[PodGroupApi]:
    """Those of ``apis`` whose PodGroup kind the cluster serves, in the order given."""
    served: list[PodGroupApi] = []
    for name in apis:
        api = group_api(name)
        group, version = group_version(api)
        try:
            await client.discovery.resolve(GroupVersionKind(group, version, "PodGroup"))
        except NotFound:
            continue
        served.append(api.name)  # type: ignore[arg-type]  # group_api refused the others
    return served


async def watch_for_pod_group_apis(
    client: Client,
    missing: Sequence[PodGroupApi],
    interval: float,
    served: Callable[[PodGroupApi], Awaitable[None]],
) -> None:
    """Every ``interval`` seconds, ask whether the cluster now serves one of the ``missing``
    APIs; await ``served(api)`` for each that it does, once, and end when none is missing.

    A failed look (the apiserver unreachable for a while) is logged and tried again at the
    next interval: a scheduler keeps scheduling the gangs it can meanwhile."""
    waiting = list(missing)
    while waiting:
        await asyncio.sleep(interval)
        try:
            found = await served_pod_group_apis(client, waiting)
        except KubernetesError as error:  # unreachable or refused for now: the next look
            log.debug("looking for PodGroup APIs failed", extra={"fields": {"error": str(error)}})
            continue
        for api in found:
            waiting.remove(api)
            await served(api)
