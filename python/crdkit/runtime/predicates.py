"""Predicates: which watch events are worth a reconcile.

A predicate sees create, update (old and new) and delete events and answers ``True`` to let the
event through. They compose with ``&``, ``|`` and ``~``::

    watches_for = GenerationChanged() | LabelsChanged()

The built-in ones look only at metadata, so they work for metadata-only (owned) informers too.
They filter *updates*; creates and deletes always pass, as in controller-runtime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from crdkit.resources import KubernetesObject

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = [
    "AnnotationsChanged",
    "FuncPredicate",
    "GenerationChanged",
    "LabelsChanged",
    "Predicate",
    "ResourceVersionChanged",
]

Obj = KubernetesObject


class Predicate:
    """Lets every event through; subclasses override the events they filter."""

    def create(self, obj: Obj) -> bool:
        """Whether a newly seen object should be reconciled."""
        return True

    def update(self, old: Obj, new: Obj) -> bool:
        """Whether a change from ``old`` to ``new`` should be reconciled."""
        return True

    def delete(self, obj: Obj) -> bool:
        """Whether a deletion should be reconciled."""
        return True

    def __and__(self, other: Predicate) -> Predicate:
        return _All(self, other)

    def __or__(self, other: Predicate) -> Predicate:
        return _Any(self, other)

    def __invert__(self) -> Predicate:
        return _Not(self)


class _Combined(Predicate):
    """Several predicates joined by ``&`` (``_All``) or ``|`` (``_Any``): each event asks every
    part, and ``join`` (``all`` or ``any``) decides."""

    join: ClassVar[Callable[[Iterable[bool]], bool]]
    symbol: ClassVar[str]

    def __init__(self, *parts: Predicate) -> None:
        self.parts = parts

    def create(self, obj: Obj) -> bool:
        return type(self).join(p.create(obj) for p in self.parts)

    def update(self, old: Obj, new: Obj) -> bool:
        return type(self).join(p.update(old, new) for p in self.parts)

    def delete(self, obj: Obj) -> bool:
        return type(self).join(p.delete(obj) for p in self.parts)

    def __repr__(self) -> str:
        return f" {self.symbol} ".join(map(repr, self.parts)).join("()")


class _All(_Combined):
    join = all
    symbol = "&"


class _Any(_Combined):
    join = any
    symbol = "|"


class _Not(Predicate):
    def __init__(self, inner: Predicate) -> None:
        self.inner = inner

    def create(self, obj: Obj) -> bool:
        return not self.inner.create(obj)

    def update(self, old: Obj, new: Obj) -> bool:
        return not self.inner.update(old, new)

    def delete(self, obj: Obj) -> bool:
        return not self.inner.delete(obj)

    def __repr__(self) -> str:
        return f"~{self.inner!r}"


class _UpdateFilter(Predicate):
    """Passes an update when ``_field(metadata)`` differs; creates and deletes always pass."""

    @staticmethod
    def _field(obj: Obj) -> Any:
        raise NotImplementedError

    def update(self, old: Obj, new: Obj) -> bool:
        return bool(self._field(old) != self._field(new))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class GenerationChanged(_UpdateFilter):
    """Spec changes only: the apiserver bumps ``generation`` for spec, not status or metadata."""

    @staticmethod
    def _field(obj: Obj) -> Any:
        return obj.metadata.generation


class LabelsChanged(_UpdateFilter):
    """Updates that change the labels."""

    @staticmethod
    def _field(obj: Obj) -> Any:
        return obj.metadata.labels


class AnnotationsChanged(_UpdateFilter):
    """Updates that change the annotations."""

    @staticmethod
    def _field(obj: Obj) -> Any:
        return obj.metadata.annotations


class ResourceVersionChanged(_UpdateFilter):
    """Drops resyncs, where the informer replays an object that did not change."""

    @staticmethod
    def _field(obj: Obj) -> Any:
        return obj.metadata.resource_version


class FuncPredicate(Predicate):
    """A predicate from plain functions; a missing function lets its events through."""

    def __init__(
        self,
        *,
        create: Callable[[Obj], bool] | None = None,
        update: Callable[[Obj, Obj], bool] | None = None,
        delete: Callable[[Obj], bool] | None = None,
    ) -> None:
        self._create = create
        self._update = update
        self._delete = delete

    def create(self, obj: Obj) -> bool:
        return True if self._create is None else self._create(obj)

    def update(self, old: Obj, new: Obj) -> bool:
        return True if self._update is None else self._update(old, new)

    def delete(self, obj: Obj) -> bool:
        return True if self._delete is None else self._delete(obj)
