"""Conversion webhooks between the versions of a custom kind, hub and spoke as in
controller-runtime (``Hub``/``Convertible``): one version is the hub (usually the storage
version) and every other version, a spoke, converts to and from it::

    class ShapeV1(CustomResource, group="geo.example.com", version="v1", kind="Shape"):
        spec: ShapeV1Spec

        def to_hub(self) -> ShapeV2: ...

        @classmethod
        def from_hub(cls, hub: ShapeV2) -> ShapeV1: ...

    manager.add_conversion(Conversion(hub=ShapeV2, spokes=(ShapeV1,)))

A conversion between two spokes goes through the hub. ``metadata`` is never the user's to
convert: each converted object carries the request's metadata unchanged (the apiserver refuses
other changes than labels and annotations). :meth:`Conversion.round_trip` is what a property
test checks: every version → hub → version gives the object back.

:func:`convert_review` answers one ``ConversionReview`` (v1), served at ``/convert``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from crdkit.resources import KubernetesObject, resource_info
from crdkit.webhook.errors import WebhookError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["Conversion", "ConversionError", "convert_review"]

log = logging.getLogger("crdkit.webhook.conversion")

CONVERT_PATH = "/convert"


class ConversionError(WebhookError, ValueError):
    """A ``ConversionReview`` that cannot be read, or an object no conversion covers."""


@dataclass(frozen=True)
class Conversion:
    """The versions of one kind: ``hub`` and the ``spokes`` that define ``to_hub()`` and the
    class method ``from_hub(hub)``."""

    hub: type[KubernetesObject]
    spokes: tuple[type[KubernetesObject], ...]

    def __post_init__(self) -> None:
        hub = resource_info(self.hub)
        if not self.spokes:
            raise ValueError(f"Conversion({hub.kind}): give at least one spoke version")
        versions = {hub.version}
        for spoke in self.spokes:
            info = resource_info(spoke)
            where = f"Conversion({hub.kind}): spoke {spoke.__qualname__}"
            if (info.group, info.kind) != (hub.group, hub.kind):
                raise ValueError(f"{where} is {info.kind} of {info.group}, not of the hub's kind")
            if info.version in versions:
                raise ValueError(f"{where}: version {info.version} is given twice")
            versions.add(info.version)
            for method in ("to_hub", "from_hub"):
                if not callable(getattr(spoke, method, None)):
                    raise ValueError(f"{where} must define {method}()")

    @property
    def group_kind(self) -> tuple[str, str]:
        info = resource_info(self.hub)
        return info.group, info.kind

    def _class(self, api_version: str) -> type[KubernetesObject]:
        for cls in (self.hub, *self.spokes):
            if resource_info(cls).api_version == api_version:
                return cls
        raise ConversionError(f"{self.group_kind[1]} has no version {api_version!r} here")

    def to_hub(self, obj: KubernetesObject) -> KubernetesObject:
        if isinstance(obj, self.hub):
            return obj
        hub = obj.to_hub()  # type: ignore[attr-defined]
        if not isinstance(hub, self.hub):
            raise TypeError(
                f"{type(obj).__qualname__}.to_hub() returned {type(hub).__qualname__}, "
                f"not {self.hub.__qualname__}"
            )
        return hub

    def convert(self, obj: KubernetesObject, to: type[KubernetesObject]) -> KubernetesObject:
        """``obj`` as version ``to`` (through the hub)."""
        if type(obj) is to:
            return obj
        hub = self.to_hub(obj)
        if to is self.hub:
            return hub
        converted = to.from_hub(hub)  # type: ignore[attr-defined]
        if not isinstance(converted, to):
            raise TypeError(f"{to.__qualname__}.from_hub() returned {type(converted).__qualname__}")
        return converted

    def round_trip(self, obj: KubernetesObject) -> KubernetesObject:
        """``obj`` converted to the hub and back to its version: equal to ``obj`` when the
        conversion loses nothing (the property to test)."""
        return self.convert(self.convert(obj, self.hub), type(obj))

    def convert_raw(self, raw: Mapping[str, Any], desired: str) -> dict[str, Any]:
        """One object of a review (JSON) as ``desired`` apiVersion, its metadata untouched."""
        source = self._class(str(raw.get("apiVersion")))
        target = self._class(desired)
        if source is target:
            return dict(raw)
        converted = self.convert(source.model_validate(raw), target).to_dict()
        converted["apiVersion"] = desired
        converted["metadata"] = raw.get("metadata", {})
        return converted


def _parse(body: object) -> tuple[str, str, list[Any]]:
    if not isinstance(body, dict):
        raise ConversionError("the body must be a JSON object (a ConversionReview)")
    if (
        body.get("apiVersion") != "apiextensions.k8s.io/v1"
        or body.get("kind") != "ConversionReview"
    ):
        raise ConversionError("apiVersion/kind must be apiextensions.k8s.io/v1 ConversionReview")
    request = body.get("request")
    if not isinstance(request, dict):
        raise ConversionError("request must be an object")
    uid, desired, objects = (
        request.get("uid"),
        request.get("desiredAPIVersion"),
        request.get("objects"),
    )
    if not isinstance(uid, str) or not uid:
        raise ConversionError("request.uid must be a non-empty string")
    if not isinstance(desired, str) or "/" not in desired:
        raise ConversionError("request.desiredAPIVersion must be group/version")
    if not isinstance(objects, list):
        raise ConversionError("request.objects must be a list")
    return uid, desired, objects


def convert_review(conversions: Sequence[Conversion], body: object) -> dict[str, Any]:
    """The ``ConversionReview`` answering ``body``: every object converted, or a Failure that
    names the object and why (the apiserver converts all or nothing). A body that is not a
    review raises :class:`ConversionError`."""
    uid, desired, objects = _parse(body)
    by_kind = {c.group_kind: c for c in conversions}
    converted: list[dict[str, Any]] = []
    for index, raw in enumerate(objects):
        try:
            if not isinstance(raw, dict):
                raise ConversionError("not an object")
            group = str(raw.get("apiVersion", "")).rpartition("/")[0]
            conversion = by_kind.get((group, str(raw.get("kind"))))
            if conversion is None:
                raise ConversionError(f"no conversion for {raw.get('kind')} of {group!r}")
            converted.append(conversion.convert_raw(raw, desired))
        except Exception as error:
            name = raw.get("metadata", {}).get("name") if isinstance(raw, dict) else None
            what = f"objects[{index}]" + (f" ({name})" if name else "")
            # A crash in the user's conversion gets a traceback; an object that does not
            # validate as its version, or no conversion for it, is said in the message alone.
            if not isinstance(error, (ConversionError, ValidationError)):
                log.exception("conversion of %s to %s failed", what, desired)
            message = f"converting {what} to {desired}: {type(error).__name__}: {error}"
            return _answer(uid, [], {"status": "Failure", "message": message})
    return _answer(uid, converted, {"status": "Success"})


def _answer(uid: str, objects: list[dict[str, Any]], result: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": {"uid": uid, "convertedObjects": objects, "result": result},
    }
