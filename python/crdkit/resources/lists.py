"""``ObjectList[T]``: a list response (``PodList``, ``TrainingJobList``, ...) of any kind."""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import Field

from crdkit.resources._model import OpenModel
from crdkit.resources.meta import ListMeta
from crdkit.resources.object import KubernetesObject

__all__ = ["ObjectList"]

T = TypeVar("T", bound=KubernetesObject)


class ObjectList(OpenModel, Generic[T]):
    """A page of a list: ``ObjectList[Pod].model_validate_json(body)``.

    ``metadata.resource_version`` is where a watch resumes; ``metadata.continue_`` asks for
    the next page. Items of built-in kinds arrive without apiVersion/kind; their model fills
    them in.
    """

    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = Field(default_factory=ListMeta)
    items: list[T] = Field(default_factory=list)
