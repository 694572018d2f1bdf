"""``CustomResource``: a pydantic class that is a Kubernetes custom resource.

::

    class TrainingJob(CustomResource, group="batch.example.com", version="v1alpha1",
                      kind="TrainingJob", scope="Namespaced", short_names=["tj"]):
        spec: TrainingJobSpec
        status: TrainingJobStatus | None = None

The class keywords end up in ``__crd_options__`` (for ``crdkit gen-crd``) and
``__resource__`` (for clients). A subclass that passes keywords starts from its parent's and
overrides the ones it names, so ``class TrainingJobV1(TrainingJobV1alpha1, version="v1")`` is
the same kind in another version; derived names (plural, singular) are recomputed from the
resulting kind unless given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from crdkit.resources.info import ResourceInfo
from crdkit.resources.object import KubernetesObject
from crdkit.resources.options import (
    CustomResourceOptions,
    PrinterColumn,
    ScaleSubresource,
    Scope,
    WebhookConversion,
)
from crdkit.resources.plural import pluralize

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["CustomResource"]

_TUPLE_OPTIONS = ("short_names", "categories", "printer_columns", "selectable_fields")
# Options that describe one version rather than the kind: a subclass declaring another version
# does not inherit them (else two versions would both claim to be the storage version).
_VERSION_LOCAL = ("served", "storage", "deprecated", "deprecation_warning")


class CustomResource(KubernetesObject):
    """Base class of custom resources; subclasses declare ``spec`` and ``status`` fields.

    A class without ``group`` (directly or inherited) is abstract: it can be subclassed but
    not addressed, and ``crdkit gen-crd`` reports it rather than guess.
    """

    __crd_options__: ClassVar[CustomResourceOptions | None] = None
    __crd_explicit__: ClassVar[Mapping[str, Any]] = {}

    def __init_subclass__(
        cls,
        *,
        group: str | None = None,
        version: str | None = None,
        kind: str | None = None,
        plural: str | None = None,
        singular: str | None = None,
        scope: Scope | None = None,
        short_names: Iterable[str] | None = None,
        categories: Iterable[str] | None = None,
        served: bool | None = None,
        storage: bool | None = None,
        deprecated: bool | None = None,
        deprecation_warning: str | None = None,
        status_subresource: bool | None = None,
        scale: ScaleSubresource | None = None,
        printer_columns: Iterable[PrinterColumn] | None = None,
        selectable_fields: Iterable[str] | None = None,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        conversion: WebhookConversion | None = None,
        **kwargs: Any,
    ) -> None:
        given = {
            name: value
            for name, value in {
                "group": group,
                "version": version,
                "kind": kind,
                "plural": plural,
                "singular": singular,
                "scope": scope,
                "short_names": short_names,
                "categories": categories,
                "served": served,
                "storage": storage,
                "deprecated": deprecated,
                "deprecation_warning": deprecation_warning,
                "status_subresource": status_subresource,
                "scale": scale,
                "printer_columns": printer_columns,
                "selectable_fields": selectable_fields,
                "labels": labels,
                "annotations": annotations,
                "conversion": conversion,
            }.items()
            if value is not None
        }
        # KubernetesObject's own keywords are for built-in kinds; skip them here.
        super(KubernetesObject, cls).__init_subclass__(**kwargs)
        if not given:
            return  # inherits the parent's options and identity unchanged
        inherited = {k: v for k, v in cls.__crd_explicit__.items() if k not in _VERSION_LOCAL}
        explicit = {**inherited, **given}
        if "kind" in given and "plural" not in given:
            explicit.pop("plural", None)
        if "kind" in given and "singular" not in given:
            explicit.pop("singular", None)
        cls.__crd_explicit__ = explicit
        if "group" not in explicit:
            # An abstract base with shared options; concrete subclasses add the group.
            cls.__crd_options__ = None
            cls.__resource__ = None
            cls.__type_meta__ = None
            return
        options = _build_options(cls.__name__, explicit)
        cls.__crd_explicit__ = {**explicit, "kind": options.kind}
        cls.__crd_options__ = options
        cls.__resource__ = ResourceInfo(
            group=options.group,
            version=options.version,
            kind=options.kind,
            plural=options.plural,
            singular=options.singular,
            namespaced=options.namespaced,
        )
        cls.__type_meta__ = (cls.__resource__.api_version, options.kind)


def _build_options(class_name: str, explicit: Mapping[str, Any]) -> CustomResourceOptions:
    values = dict(explicit)
    kind = values.setdefault("kind", class_name)
    if "version" not in values:
        raise TypeError(f"{class_name}: a custom resource needs version=... (e.g. 'v1')")
    values.setdefault("plural", pluralize(kind).lower())
    values.setdefault("singular", kind.lower())
    for name in _TUPLE_OPTIONS:
        if name in values:
            if isinstance(values[name], str):
                raise TypeError(f"{class_name}: {name} must be a list, not a string")
            values[name] = tuple(values[name])
    for name in ("labels", "annotations"):
        if name in values:
            values[name] = dict(values[name])
    try:
        return CustomResourceOptions(**values)
    except ValueError as error:
        raise TypeError(f"{class_name}: {error}") from None
