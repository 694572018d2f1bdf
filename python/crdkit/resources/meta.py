"""``ObjectMeta`` and its parts: the metadata every stored Kubernetes object carries."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from crdkit.resources._model import OpenModel, RawObject, Time

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["LabelSelector", "LabelSelectorRequirement", "ListMeta", "ObjectMeta", "OwnerReference"]


class OwnerReference(OpenModel):
    """Points at the object that owns this one (garbage collection, ``Owns()`` watches)."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(OpenModel):
    """Standard object metadata.

    Collections default to empty so handlers can read ``meta.labels.get(...)`` without a
    ``None`` check; ``managedFields`` stays raw data because only server-side apply reads it.
    """

    name: str | None = None
    namespace: str | None = None
    generate_name: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: Time | None = None
    deletion_timestamp: Time | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    owner_references: list[OwnerReference] = Field(default_factory=list)
    finalizers: list[str] = Field(default_factory=list)
    managed_fields: list[RawObject] | None = None


class ListMeta(OpenModel):
    """Metadata of a list response: the version to watch from and the next page's token."""

    resource_version: str | None = None
    continue_: str | None = Field(default=None, alias="continue")
    remaining_item_count: int | None = None


class LabelSelectorRequirement(OpenModel):
    """One ``matchExpressions`` term: ``key`` ``In``/``NotIn``/``Exists``/``DoesNotExist``."""

    key: str
    operator: str
    values: list[str] = Field(default_factory=list)


class LabelSelector(OpenModel):
    """``metav1.LabelSelector``: both parts must match; an empty selector matches everything."""

    match_labels: dict[str, str] = Field(default_factory=dict)
    match_expressions: list[LabelSelectorRequirement] = Field(default_factory=list)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this selector, as ``metav1.LabelSelectorAsSelector``
        reads it (an unknown operator matches nothing, as the apiserver would refuse it)."""
        if any(labels.get(key) != value for key, value in self.match_labels.items()):
            return False
        for term in self.match_expressions:
            present = term.key in labels
            if term.operator == "In":
                ok = present and labels[term.key] in term.values
            elif term.operator == "NotIn":
                ok = not present or labels[term.key] not in term.values
            elif term.operator == "Exists":
                ok = present
            elif term.operator == "DoesNotExist":
                ok = not present
            else:
                ok = False
            if not ok:
                return False
        return True
