"""Resolving a kind to its REST resource through the apiserver's discovery documents.

Typed classes carry their ``ResourceInfo``; untyped objects only know ``apiVersion`` and
``kind``, and the plural (``Policy`` → ``policies``, ``Endpoints`` → ``endpoints``) cannot be
guessed reliably, so it is looked up in ``/api/v1`` or ``/apis/{group}/{version}`` and cached
per group-version. A miss refetches once: the CRD may have been installed since.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from crdkit.client.errors import DecodeError, NotFound
from crdkit.resources import ResourceInfo

__all__ = ["Discovery", "GroupVersionKind"]


@dataclass(frozen=True, slots=True)
class GroupVersionKind:
    """An untyped kind: ``GroupVersionKind("batch.example.com", "v1", "TrainingJob")``.

    The core group is ``""`` (``GroupVersionKind("", "v1", "Pod")``).
    """

    group: str
    version: str
    kind: str

    def __post_init__(self) -> None:
        if not self.version:
            raise ValueError("GroupVersionKind.version must not be empty")
        if not self.kind:
            raise ValueError("GroupVersionKind.kind must not be empty")

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> GroupVersionKind:
        """The kind of an untyped object, from its ``apiVersion`` and ``kind`` fields."""
        api_version = obj.get("apiVersion")
        kind = obj.get("kind")
        if not isinstance(api_version, str) or not api_version:
            raise ValueError("object has no apiVersion: untyped objects need apiVersion and kind")
        if not isinstance(kind, str) or not kind:
            raise ValueError("object has no kind: untyped objects need apiVersion and kind")
        group, _, version = api_version.rpartition("/")
        return cls(group, version, kind)


Fetch = Callable[[str], Awaitable[bytes]]


class Discovery:
    """A per-client cache of discovery documents, one per group-version."""

    def __init__(self, fetch: Fetch) -> None:
        self._fetch = fetch
        self._cache: dict[tuple[str, str], dict[str, ResourceInfo]] = {}
        self._lock = asyncio.Lock()

    async def resolve(self, gvk: GroupVersionKind) -> ResourceInfo:
        """The resource serving ``gvk``; ``NotFound`` when the apiserver does not serve it."""
        key = (gvk.group, gvk.version)
        for refresh in (False, True):
            kinds = await self._kinds(key, refresh=refresh)
            info = kinds.get(gvk.kind)
            if info is not None:
                return info
        raise NotFound(
            f"the server does not serve kind {gvk.kind!r} in {gvk.api_version}",
            code=404,
            reason="NotFound",
        )

    def invalidate(self) -> None:
        self._cache.clear()

    async def _kinds(self, key: tuple[str, str], *, refresh: bool) -> dict[str, ResourceInfo]:
        async with self._lock:
            if refresh or key not in self._cache:
                group, version = key
                path = f"/apis/{group}/{version}" if group else f"/api/{version}"
                try:
                    body = await self._fetch(path)
                except NotFound:
                    self._cache[key] = {}
                else:
                    self._cache[key] = parse_resource_list(group, version, body)
            return self._cache[key]


def parse_resource_list(group: str, version: str, body: bytes) -> dict[str, ResourceInfo]:
    """Kind → ResourceInfo from an ``APIResourceList``; subresources (pods/status) skipped."""
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise DecodeError(f"discovery document for {group}/{version} is not JSON") from exc
    kinds: dict[str, ResourceInfo] = {}
    for resource in document.get("resources") or []:
        name = resource.get("name", "")
        if not name or "/" in name or not resource.get("kind"):
            continue
        kinds.setdefault(
            resource["kind"],
            ResourceInfo(
                group=group,
                version=version,
                kind=resource["kind"],
                plural=name,
                singular=resource.get("singularName") or resource["kind"].lower(),
                namespaced=bool(resource.get("namespaced")),
            ),
        )
    return kinds
