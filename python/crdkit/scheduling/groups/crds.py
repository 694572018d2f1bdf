"""The upstream PodGroup CRDs shipped with crdkit, and installing the ones a cluster lacks.

A CRD the cluster has already (perhaps a newer release of Volcano's) is left as it is:
installing only creates what is missing, so crdkit never downgrades another project's API.
An API built into kube-apiserver (Kubernetes' own PodGroup) has no CRD: it is left out of
what is printed and installed, and the apiserver must be started to serve it instead.
"""

from __future__ import annotations

import asyncio
import time
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from crdkit._yaml import load_yaml_documents
from crdkit.scheduling.groups import GROUP_APIS, POD_GROUP_APIS

if TYPE_CHECKING:
    from collections.abc import Iterable

    from crdkit.client import Client

__all__ = [
    "POD_GROUP_CRD_FILES",
    "QUEUE_CRD_FILE",
    "install_crds",
    "install_pod_group_crds",
    "pod_group_crd_text",
    "pod_group_crds",
    "queue_crd",
    "queue_crd_text",
    "with_crds",
]

QUEUE_CRD_FILE = "scheduling.crdkit.io_queues.yaml"
POD_GROUP_CRD_FILES: dict[str, str] = {
    name: api.crd_file for name, api in GROUP_APIS.items() if api.crd_file is not None
}
"""The file of each PodGroup API's CRD in ``crdkit/scheduling/groups/crds`` (sources in its
README), from the adapters."""


def pod_group_crd_text(api: str) -> str:
    """The YAML of ``api``'s CRD, as upstream ships it."""
    if api not in POD_GROUP_CRD_FILES:
        if api in POD_GROUP_APIS:
            raise ValueError(f"{api}: {GROUP_APIS[api].unserved_hint}; it has no CRD")
        raise ValueError(f"unknown PodGroup API {api!r} ({', '.join(POD_GROUP_APIS)})")
    return (files("crdkit.scheduling.groups") / "crds" / POD_GROUP_CRD_FILES[api]).read_text()


def with_crds(apis: Iterable[str]) -> list[str]:
    """Those of ``apis`` whose PodGroup is a CRD (the built-in ones left out)."""
    return [api for api in apis if api in POD_GROUP_CRD_FILES]


def pod_group_crds(apis: Iterable[str] = POD_GROUP_CRD_FILES) -> list[dict[str, Any]]:
    """The CRD objects of ``apis`` (an API built into the apiserver has none)."""
    crds: list[dict[str, Any]] = []
    for api in with_crds(apis):
        crds.extend(d for d in load_yaml_documents(pod_group_crd_text(api)) if d)
    return crds


async def install_pod_group_crds(
    client: Client, apis: Iterable[str], *, wait: float = 60.0
) -> list[str]:
    """Create the CRDs of ``apis`` the cluster lacks and wait until it serves them; the names
    of those created (an existing CRD is left alone, a built-in API has none)."""
    return await install_crds(client, pod_group_crds(apis), wait=wait)


def queue_crd_text() -> str:
    """crdkit's own `Queue` CRD as YAML (``crdkit gen-crd crdkit.resources.queues``)."""
    return (files("crdkit.scheduling") / "queues" / "crds" / QUEUE_CRD_FILE).read_text()


def queue_crd() -> dict[str, Any]:
    """crdkit's own `Queue` CRD."""
    return next(d for d in load_yaml_documents(queue_crd_text()) if d)


async def install_crds(
    client: Client, crds: list[dict[str, Any]], *, wait: float = 60.0
) -> list[str]:
    """Create the CRDs the cluster lacks and wait until it serves them; the names of those
    created (an existing CRD is left alone)."""
    from crdkit.client import AlreadyExists, GroupVersionKind, NotFound

    created = []
    for crd in crds:
        try:
            await client.create(crd)
        except AlreadyExists:
            continue
        created.append(crd["metadata"]["name"])
    deadline = time.monotonic() + wait
    for crd in crds:
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        versions = [v["name"] for v in crd["spec"]["versions"] if v.get("served", True)]
        for version in versions:
            while True:
                client.discovery.invalidate()
                try:
                    await client.discovery.resolve(GroupVersionKind(group, version, kind))
                    break
                except NotFound:
                    if time.monotonic() > deadline:
                        raise TimeoutError(
                            f"{crd['metadata']['name']}: not served within {wait:g}s"
                        ) from None
                    await asyncio.sleep(0.2)
    return created
