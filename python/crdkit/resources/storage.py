"""``PersistentVolumeClaim`` (core ``v1``): the storage a StatefulSet's pods or a training job's
checkpoints ask for."""

# Annotations are evaluated at class creation (no `from __future__ import annotations`), so the
# names they use are runtime imports to pydantic and to the linter alike.
from pydantic import Field

from crdkit.resources._model import OpenModel
from crdkit.resources.core import Quantity
from crdkit.resources.meta import LabelSelector
from crdkit.resources.object import KubernetesObject

__all__ = [
    "PersistentVolumeClaim",
    "PersistentVolumeClaimSpec",
    "PersistentVolumeClaimStatus",
    "VolumeResourceRequirements",
]


class VolumeResourceRequirements(OpenModel):
    requests: dict[str, Quantity] = Field(default_factory=dict)
    limits: dict[str, Quantity] = Field(default_factory=dict)


class PersistentVolumeClaimSpec(OpenModel):
    access_modes: list[str] = Field(default_factory=list)
    resources: VolumeResourceRequirements = Field(default_factory=VolumeResourceRequirements)
    storage_class_name: str | None = None
    volume_mode: str | None = None
    volume_name: str | None = None
    selector: LabelSelector | None = None


class PersistentVolumeClaimStatus(OpenModel):
    phase: str | None = None
    access_modes: list[str] = Field(default_factory=list)
    capacity: dict[str, Quantity] = Field(default_factory=dict)


class PersistentVolumeClaim(
    KubernetesObject,
    group="",
    version="v1",
    kind="PersistentVolumeClaim",
    plural="persistentvolumeclaims",
):
    spec: PersistentVolumeClaimSpec = Field(default_factory=PersistentVolumeClaimSpec)
    status: PersistentVolumeClaimStatus | None = None
