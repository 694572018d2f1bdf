"""``Watch``: one extra kind a controller watches, and how its changes map to reconciles.

::

    class GangReconciler(Reconciler[PodGroup]):
        watches = (
            Watch(Pod, "group_of", metadata_only=True),   # a method of the reconciler
            Watch(Node, nodes_to_groups),                 # a function, plain or async
            (ConfigMap, lambda cm: [Request(cm.metadata.namespace, "all")]),  # the tuple form
        )

        def setup(self, manager: Manager) -> None:
            self.cache = manager.cache   # what "group_of" reads

        async def group_of(self, pod: PartialObjectMetadata) -> list[Request]: ...

``map`` is a function ``(obj) -> Iterable[Request]``, an async function returning the same, or
the name of a method of the reconciler; the name is looked up on the instance when the manager
adds it, so the method can use what ``setup`` prepared. ``map=None`` reconciles the object's
controlling owner, as ``owns`` does. ``metadata_only=True`` watches through the metadata-only
informer (the map then gets ``PartialObjectMetadata``); ``predicates`` filters the watched
kind's events before the map runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any

from crdkit.resources import KubernetesObject

if TYPE_CHECKING:
    from crdkit.runtime.predicates import Predicate
    from crdkit.runtime.result import Request

__all__ = ["AnyMapFunc", "Watch", "declared_watches"]

AnyMapFunc = Callable[[Any], "Iterable[Request] | Awaitable[Iterable[Request]]"]
"""A map function as a watch may give it: plain, or a coroutine function."""


@dataclass(frozen=True)
class Watch:
    """A watched kind and its map; see the module docstring."""

    kind: type[KubernetesObject]
    map: AnyMapFunc | str | None = None
    _: KW_ONLY
    metadata_only: bool = False
    predicates: Predicate | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.kind, type) and issubclass(self.kind, KubernetesObject)):
            raise TypeError(f"Watch.kind must be a resource class, got {self.kind!r}")
        if self.map is not None and not isinstance(self.map, str) and not callable(self.map):
            raise TypeError(
                f"Watch({self.kind.__name__}).map must be a function, a method name or None, "
                f"got {self.map!r}"
            )

    def resolve(self, reconciler: object) -> AnyMapFunc | None:
        """The map as a callable: a method name is looked up on ``reconciler`` (bound)."""
        if not isinstance(self.map, str):
            return self.map
        owner = type(reconciler).__qualname__
        method = getattr(reconciler, self.map, None)
        if method is None:
            raise AttributeError(
                f"{owner}.watches: Watch({self.kind.__name__}) maps with {self.map!r}, "
                f"which {owner} does not define"
            )
        if not callable(method):
            raise TypeError(
                f"{owner}.watches: Watch({self.kind.__name__}).map {self.map!r} is not a method"
            )
        resolved: AnyMapFunc = method
        return resolved


def declared_watches(cls: type[Any]) -> list[Watch]:
    """A reconciler class's ``watches``, the ``(kind, map)`` tuples turned into ``Watch``."""
    watches: list[Watch] = []
    for index, entry in enumerate(getattr(cls, "watches", ())):
        if isinstance(entry, Watch):
            watches.append(entry)
        elif isinstance(entry, tuple) and len(entry) == 2:
            try:
                watches.append(Watch(entry[0], entry[1]))
            except TypeError as error:
                raise TypeError(f"{cls.__qualname__}.watches[{index}]: {error}") from None
        else:
            raise TypeError(
                f"{cls.__qualname__}.watches[{index}]: expected Watch(...) or (Kind, map), "
                f"got {entry!r}"
            )
    return watches
