"""``KubernetesObject``: apiVersion, kind and metadata, and the bodies sent to the apiserver.

Each concrete kind fixes its ``apiVersion`` and ``kind`` through class keywords::

    class Pod(KubernetesObject, group="", version="v1", kind="Pod", plural="pods"): ...

Reading an object fills them in when absent (list items of built-in kinds come without them)
and refuses an object of another kind, so a model can never silently hold the wrong resource.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

from pydantic import Field, model_validator

from crdkit.resources._model import OpenModel
from crdkit.resources.info import ResourceInfo
from crdkit.resources.meta import ObjectMeta

__all__ = ["KubernetesObject"]


class KubernetesObject(OpenModel):
    """The common shape of every Kubernetes object.

    ``__type_meta__`` is the fixed ``(apiVersion, kind)`` of the class; ``__resource__`` is how
    to address it over REST (``None`` for abstract bases and for types that are not resources,
    such as ``PartialObjectMetadata``).
    """

    __type_meta__: ClassVar[tuple[str, str] | None] = None
    __resource__: ClassVar[ResourceInfo | None] = None

    api_version: str = ""
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    def __init_subclass__(
        cls,
        *,
        group: str | None = None,
        version: str | None = None,
        kind: str | None = None,
        plural: str | None = None,
        singular: str | None = None,
        namespaced: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        if version is None and kind is None and group is None:
            return  # an intermediate class: inherits its parent's identity, if any
        if group is None or version is None or kind is None or plural is None:
            raise TypeError(
                f"{cls.__qualname__}: a built-in kind needs group, version, kind and plural"
            )
        info = ResourceInfo(
            group=group,
            version=version,
            kind=kind,
            plural=plural,
            singular=singular or kind.lower(),
            namespaced=namespaced,
        )
        cls.__resource__ = info
        cls.__type_meta__ = (info.api_version, kind)

    @model_validator(mode="after")
    def _fix_type_meta(self) -> Self:
        fixed = type(self).__type_meta__
        if fixed is None:
            return self
        api_version, kind = fixed
        if not self.api_version:
            self.api_version = api_version
        elif self.api_version != api_version:
            raise ValueError(f"apiVersion must be {api_version!r}, got {self.api_version!r}")
        if not self.kind:
            self.kind = kind
        elif self.kind != kind:
            raise ValueError(f"kind must be {kind!r}, got {self.kind!r}")
        return self

    # -- bodies for the apiserver ----------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The whole object as JSON data for create and update (``None`` fields left out)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def to_json(self) -> bytes:
        """``to_dict`` as UTF-8 JSON bytes, serialised by pydantic-core directly."""
        return self.model_dump_json(by_alias=True, exclude_none=True).encode()

    def to_merge_patch(self) -> dict[str, Any]:
        """A JSON merge patch (RFC 7386) of the fields that were set.

        Fields set explicitly to ``None`` stay in the patch as ``null``: that is how a merge
        patch deletes a field. Fields never set are left out, so they are not touched.
        """
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def to_apply(self) -> dict[str, Any]:
        """A server-side apply body: the fields this manager set, plus apiVersion and kind."""
        body = self.model_dump(mode="json", by_alias=True, exclude_unset=True, exclude_none=True)
        body["apiVersion"] = self.api_version
        body["kind"] = self.kind
        return body
