"""``PartialObjectMetadata``: only the metadata of objects of any kind.

The apiserver returns it when asked with ``Accept: application/json;as=PartialObjectMetadata;
g=meta.k8s.io;v=v1`` (and ``as=PartialObjectMetadataList`` for lists). Watching metadata only
keeps caches of large objects (Pods, Secrets) small.
"""

from __future__ import annotations

from typing import ClassVar

from crdkit.resources.object import KubernetesObject

__all__ = ["METADATA_ACCEPT", "METADATA_LIST_ACCEPT", "PartialObjectMetadata"]

METADATA_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
METADATA_LIST_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


class PartialObjectMetadata(KubernetesObject):
    """Metadata of an object; not a resource of its own, so it has no ``__resource__``."""

    __type_meta__: ClassVar[tuple[str, str] | None] = ("meta.k8s.io/v1", "PartialObjectMetadata")
