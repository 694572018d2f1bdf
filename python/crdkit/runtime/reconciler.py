"""``Reconciler[T]``: what an operator author subclasses.

::

    class HelloReconciler(Reconciler[Hello]):
        owns = (ConfigMap,)

        async def reconcile(self, ctx: Context, obj: Hello) -> Result | None:
            await ctx.apply(ConfigMap(metadata=ObjectMeta(name=obj.metadata.name, ...)))
            ...

The primary kind comes from the type parameter (``Reconciler[Hello]``) or, when the class is
generic itself, from a ``resource = Hello`` class attribute. The class attributes below say what
else to watch and how to run; :class:`~crdkit.runtime.manager.Manager` reads them.

``reconcile`` is level-triggered: it receives the current object from the cache and must bring
the world in line with it, idempotently. It is not called for an object that no longer exists;
clean-up belongs in owner references (the garbage collector) or in ``finalize``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, get_args, get_origin

from crdkit.resources import KubernetesObject, resource_info

if TYPE_CHECKING:
    from crdkit.runtime.context import Context
    from crdkit.runtime.manager import Manager
    from crdkit.runtime.predicates import Predicate
    from crdkit.runtime.ratelimit import RateLimiter
    from crdkit.runtime.result import Request, Result
    from crdkit.runtime.runnable import Runnable
    from crdkit.runtime.watch import Watch
    from crdkit.webhook.admission import Webhook
    from crdkit.webhook.conversion import Conversion

__all__ = ["MapFunc", "RbacRule", "Reconciler"]

T = TypeVar("T", bound=KubernetesObject)

MapFunc = Callable[[Any], Iterable["Request"]]
"""Maps a watched object to the primary objects to reconcile (a mapped watch)."""

RbacRule = tuple[str, str, Sequence[str]]
"""An extra permission for ``crdkit gen-rbac``: ``(api_group, resource, verbs)``."""

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


class Reconciler(Generic[T]):
    """Base class of reconcilers; see the module docstring."""

    resource: ClassVar[type[KubernetesObject]]
    """The primary kind: set from the type parameter, or by hand."""

    name: ClassVar[str] = ""
    """The controller's name in logs, metrics and the lease; default: the kind, lowercased."""

    owns: ClassVar[Sequence[type[KubernetesObject]]] = ()
    """Kinds whose objects this controller creates: their changes reconcile the controlling
    owner (through ``ownerReferences``). Watched metadata-only, so the cache stays small."""

    watches: ClassVar[Sequence[tuple[type[KubernetesObject], MapFunc] | Watch]] = ()
    """Other kinds whose changes matter: :class:`~crdkit.runtime.watch.Watch` objects, or
    ``(kind, map_fn)`` tuples, each with a function to the requests to reconcile."""

    webhooks: ClassVar[Sequence[Webhook[Any]]] = ()
    """Admission webhooks the manager serves with this controller (and ``crdkit gen-webhooks``
    describes): :class:`~crdkit.webhook.admission.Webhook` objects, of any kinds."""

    conversions: ClassVar[Sequence[Conversion]] = ()
    """Conversion webhooks the manager serves at ``/convert`` with this controller:
    :class:`~crdkit.webhook.conversion.Conversion` objects (hub and spokes of a kind)."""

    predicates: ClassVar[Predicate | None] = None
    """Which events of the primary kind trigger a reconcile (default: all)."""

    max_concurrent_reconciles: ClassVar[int | None] = None
    """Workers for this controller; ``None`` takes the manager's setting (default 1)."""

    reconcile_timeout: ClassVar[float | None] = None
    """Seconds after which a reconcile is cancelled and retried with backoff."""

    finalizer: ClassVar[str | None] = None
    """The finalizer added when ``finalize`` is defined; default ``<group>/<name>-finalizer``."""

    rbac: ClassVar[Sequence[RbacRule]] = ()
    """Extra permissions for ``crdkit gen-rbac`` (what ``reconcile`` touches beyond its
    primary, owned and watched kinds)."""

    runnables: ClassVar[Sequence[type[Runnable]]] = ()
    """The :class:`~crdkit.runtime.runnable.Runnable` classes ``setup`` adds, so that
    ``crdkit gen-rbac`` grants their ``rbac`` too."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "resource" not in cls.__dict__:
            for base in getattr(cls, "__orig_bases__", ()):
                origin = get_origin(base)
                if isinstance(origin, type) and issubclass(origin, Reconciler):
                    args = get_args(base)
                    if args and isinstance(args[0], type) and issubclass(args[0], KubernetesObject):
                        cls.resource = args[0]
                        break

    @classmethod
    def primary_kind(cls) -> type[KubernetesObject]:
        """The primary kind, or a ``TypeError`` that says how to name it."""
        kind = getattr(cls, "resource", None)
        if not (isinstance(kind, type) and issubclass(kind, KubernetesObject)):
            raise TypeError(
                f"{cls.__qualname__}: name the primary kind as Reconciler[Kind] or with a "
                "`resource = Kind` class attribute"
            )
        resource_info(kind)  # raises TypeError for a kind that is not addressable
        return kind

    @classmethod
    def controller_name(cls) -> str:
        """The name used in logs, metrics, field manager and events."""
        name = cls.name or resource_info(cls.primary_kind()).kind.lower()
        if not _NAME.match(name) or len(name) > 63:
            raise ValueError(
                f"{cls.__qualname__}.name must be a lowercase DNS-style name, got {name!r}"
            )
        return name

    @classmethod
    def finalizer_name(cls) -> str:
        """The finalizer this controller owns on its primary objects."""
        if cls.finalizer:
            if "/" not in cls.finalizer:
                raise ValueError(
                    f"{cls.__qualname__}.finalizer must be domain-qualified, like "
                    f"'example.com/cleanup', got {cls.finalizer!r}"
                )
            return cls.finalizer
        group = resource_info(cls.primary_kind()).group or "crdkit.io"
        return f"{group}/{cls.controller_name()}-finalizer"

    @classmethod
    def has_finalize(cls) -> bool:
        """Whether the subclass defines ``finalize`` (and so wants a finalizer)."""
        return cls.finalize is not Reconciler.finalize

    def rate_limiter(self) -> RateLimiter[Request] | None:
        """How long a failed reconcile waits before its retry (controller-runtime's
        ``controller.Options.RateLimiter``); called once, when the controller is built.

        ``None`` (the default) takes client-go's controller default: 5 ms doubling per failure
        up to 1000 s for each object, at most 10 retries a second overall. Return your own
        limiter (for instance ``MaxOfRateLimiter(ItemExponentialRateLimiter(0.005, 30.0),
        TokenBucketRateLimiter(10.0, 100))``) when a flaky dependency should not push an
        object's retries out for minutes. Return a new limiter each call: it keeps each
        object's failures. :meth:`Manager.add` refuses a value that is no limiter (or a
        limiter set as a class attribute) with a ``TypeError`` naming this method."""
        return None

    def setup(self, manager: Manager) -> None:
        """Called by :meth:`Manager.add` once this controller and its declared watches are
        wired: add more informers, handlers or runnables here (before the caches start)."""

    async def reconcile(self, ctx: Context, obj: T) -> Result | None:
        """Bring the world in line with ``obj``; return ``Result`` to be called again."""
        raise NotImplementedError(f"{type(self).__qualname__} must implement reconcile()")

    async def finalize(self, ctx: Context, obj: T) -> None:
        """Clean up before ``obj`` is deleted; the finalizer is removed once this returns.

        Defining it is what makes crdkit add the finalizer. Raising retries with backoff.
        """
        raise NotImplementedError
