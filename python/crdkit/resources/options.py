"""The CRD-level options of a custom resource class: names, scope, versions, subresources, columns.

They are plain frozen dataclasses so ``crdkit.crd`` can read them without importing pydantic
internals, and so two classes of one kind can be compared option by option.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "CustomResourceOptions",
    "PrinterColumn",
    "ScaleSubresource",
    "WebhookConversion",
]

Scope = Literal["Namespaced", "Cluster"]
ColumnType = Literal["integer", "number", "string", "boolean", "date"]

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")


@dataclass(frozen=True)
class PrinterColumn:
    """An ``additionalPrinterColumns`` entry (``+kubebuilder:printcolumn``)."""

    name: str
    json_path: str
    type: ColumnType = "string"
    format: str | None = None
    description: str | None = None
    priority: int = 0

    def __post_init__(self) -> None:
        if not self.json_path.startswith("."):
            raise ValueError(
                f"printer column {self.name!r}: json_path must start with '.', "
                f"got {self.json_path!r}"
            )


@dataclass(frozen=True)
class ScaleSubresource:
    """The ``scale`` subresource (``+kubebuilder:subresource:scale``)."""

    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str | None = None


@dataclass(frozen=True)
class WebhookConversion:
    """A ``Webhook`` conversion strategy: where the apiserver sends ConversionReviews."""

    service_name: str
    service_namespace: str
    path: str = "/convert"
    port: int = 443
    ca_bundle: str | None = None
    review_versions: tuple[str, ...] = ("v1",)


@dataclass(frozen=True)
class CustomResourceOptions:
    """Everything the class keywords of a ``CustomResource`` declare.

    ``storage=None`` means "not said": a kind with a single version stores it; a kind with
    several versions must mark exactly one. ``status_subresource=None`` means "if the class
    declares a ``status`` field".
    """

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    scope: Scope = "Namespaced"
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    served: bool = True
    storage: bool | None = None
    deprecated: bool = False
    deprecation_warning: str | None = None
    status_subresource: bool | None = None
    scale: ScaleSubresource | None = None
    printer_columns: tuple[PrinterColumn, ...] = ()
    selectable_fields: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    conversion: WebhookConversion | None = None

    def __post_init__(self) -> None:
        where = f"{self.kind or '?'}"
        if not self.group or "." not in self.group or not _DNS_SUBDOMAIN.match(self.group):
            raise ValueError(
                f"{where}: group must be a DNS subdomain with at least one dot "
                f"(e.g. batch.example.com), got {self.group!r}"
            )
        if not _DNS_LABEL.match(self.version):
            raise ValueError(
                f"{where}: version must be a lowercase DNS label such as v1 or v1beta1, "
                f"got {self.version!r}"
            )
        if not _KIND.match(self.kind):
            raise ValueError(f"kind must be CamelCase letters and digits, got {self.kind!r}")
        names = {"plural": self.plural, "singular": self.singular}
        names.update({f"short_names[{i}]": short for i, short in enumerate(self.short_names)})
        for name, value in names.items():
            if not _DNS_LABEL.match(value):
                raise ValueError(f"{where}: {name} must be a lowercase DNS label, got {value!r}")
        if self.scope not in ("Namespaced", "Cluster"):
            raise ValueError(
                f"{where}: scope must be 'Namespaced' or 'Cluster', got {self.scope!r}"
            )
        if self.deprecation_warning is not None and not self.deprecated:
            raise ValueError(f"{where}: deprecation_warning needs deprecated=True")
        if self.storage and not self.served:
            raise ValueError(f"{where}: the storage version must be served")
        for path in self.selectable_fields:
            if not path.startswith("."):
                raise ValueError(f"{where}: selectable field {path!r} must start with '.'")

    @property
    def namespaced(self) -> bool:
        return self.scope == "Namespaced"

    @property
    def crd_name(self) -> str:
        """``<plural>.<group>``, the name the CRD object must have."""
        return f"{self.plural}.{self.group}"
