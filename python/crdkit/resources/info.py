"""``ResourceInfo``: what a client needs to address a kind over REST."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ResourceInfo", "resource_info"]


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """Group, version, kind and REST names of one resource (``GroupVersionResource`` + kind)."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool

    def __post_init__(self) -> None:
        for name in ("version", "kind", "plural", "singular"):
            if not getattr(self, name):
                raise ValueError(f"ResourceInfo.{name} must not be empty")
        if self.plural != self.plural.lower() or self.singular != self.singular.lower():
            raise ValueError(
                f"ResourceInfo plural and singular must be lowercase, got "
                f"{self.plural!r} and {self.singular!r}"
            )

    @property
    def api_version(self) -> str:
        """``v1`` for the core group, ``group/version`` otherwise."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        """The kind of a list response, e.g. ``PodList``."""
        return f"{self.kind}List"

    def path(
        self,
        *,
        namespace: str | None = None,
        name: str | None = None,
        subresource: str | None = None,
    ) -> str:
        """The REST path of the collection, or of one object (and one of its subresources).

        A namespaced collection without ``namespace`` is the all-namespaces collection; a
        namespaced *object* needs its namespace, and a cluster-scoped one must not have one.
        """
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if namespace is not None and not self.namespaced:
            raise ValueError(f"{self.kind} is cluster-scoped: namespace must not be given")
        if name is not None and self.namespaced and namespace is None:
            raise ValueError(
                f"{self.kind} is namespaced: a namespace is needed to address {name!r}"
            )
        if subresource is not None and name is None:
            raise ValueError("a subresource needs an object name")
        path = root
        if namespace is not None:
            path += f"/namespaces/{namespace}"
        path += f"/{self.plural}"
        if name is not None:
            path += f"/{name}"
        if subresource is not None:
            path += f"/{subresource}"
        return path


def resource_info(cls_or_obj: Any) -> ResourceInfo:
    """The ``ResourceInfo`` of a resource class (or instance), or a ``TypeError`` saying why not."""
    cls = cls_or_obj if isinstance(cls_or_obj, type) else type(cls_or_obj)
    info = getattr(cls, "__resource__", None)
    if not isinstance(info, ResourceInfo):
        raise TypeError(
            f"{cls.__qualname__} is not an addressable resource: it declares no group/version/kind "
            "(pass them as class keywords)"
        )
    return info
