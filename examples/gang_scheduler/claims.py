"""``core/v1`` ``PersistentVolumeClaimSpec``, typed as Volcano's Job CRD embeds it.

A Volcano Job's ``volumes[].volumeClaim`` is a whole PVC spec (Volcano creates the claim); the
CRD spells out its fields, so these models do too, rather than keeping it opaque: a field
Volcano's schema refuses is refused here as well, and one it keeps is kept.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, StrictInt, WithJsonSchema

from crdkit.crd import ListType, MapType
from crdkit.resources import ApiModel

# resource.Quantity's OpenAPI pattern, as Volcano's CRD (and every core type's) carries it.
_QUANTITY = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


def _quantity(value: int | str) -> int | str:
    if isinstance(value, str) and not re.match(_QUANTITY, value):
        raise ValueError(f"{value!r} is not a quantity such as '8Gi' or '500m'")
    return value


Quantity = Annotated[
    StrictInt | str,
    AfterValidator(_quantity),
    WithJsonSchema({"x-kubernetes-int-or-string": True, "pattern": _QUANTITY}),
]
"""A quantity as the apiserver takes it in a PVC spec: an integer or a string such as ``8Gi``,
kept as written (``crdkit.resources.Quantity`` is the string the apiserver writes back)."""


class TypedLocalObjectReference(ApiModel):
    """``dataSource``: an object in the claim's namespace to populate the volume from."""

    api_group: str | None = Field(default=None, alias="apiGroup")
    kind: str
    name: str


class TypedObjectReference(ApiModel):
    """``dataSourceRef``: like ``dataSource``, possibly in another namespace."""

    api_group: str | None = Field(default=None, alias="apiGroup")
    kind: str
    name: str
    namespace: str | None = None


class VolumeResourceRequirements(ApiModel):
    """The storage the claim asks for and may grow to."""

    limits: dict[str, Quantity] | None = None
    requests: dict[str, Quantity] | None = None


class LabelSelectorRequirement(ApiModel):
    key: str
    operator: str
    values: Annotated[list[str] | None, ListType("atomic")] = None


class LabelSelector(ApiModel):
    """``metav1.LabelSelector``: the volumes the claim may bind."""

    match_expressions: Annotated[list[LabelSelectorRequirement] | None, ListType("atomic")] = None
    match_labels: dict[str, str] | None = None


class PersistentVolumeClaimSpec(ApiModel):
    """The claim Volcano creates for a job volume that names no existing one."""

    access_modes: Annotated[list[str] | None, ListType("atomic")] = None
    data_source: Annotated[TypedLocalObjectReference | None, MapType("atomic")] = None
    data_source_ref: TypedObjectReference | None = None
    resources: VolumeResourceRequirements | None = None
    selector: Annotated[LabelSelector | None, MapType("atomic")] = None
    storage_class_name: str | None = None
    volume_attributes_class_name: str | None = None
    volume_mode: str | None = None
    volume_name: str | None = None
