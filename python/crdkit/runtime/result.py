"""What a reconcile is asked and what it answers: ``Request``, ``Result``, ``TerminalError``."""

from __future__ import annotations

from dataclasses import dataclass

from crdkit.runtime.errors import ControllerError

__all__ = ["Request", "Result", "TerminalError"]


@dataclass(frozen=True, slots=True, order=True)
class Request:
    """The key of one object in a controller's work queue: namespace (``None`` if cluster-scoped)
    and name. Only the key is queued, never the object, so a reconcile always reads the latest
    state from the cache (level-triggered)."""

    namespace: str | None
    name: str

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("Request.name must not be empty")
        if self.namespace == "":
            raise ValueError("Request.namespace must be None or a non-empty namespace")

    def __str__(self) -> str:
        return self.name if self.namespace is None else f"{self.namespace}/{self.name}"

    @classmethod
    def scoped(cls, namespace: str | None, name: str, *, namespaced: bool) -> Request:
        """The request for ``name`` of a kind that is ``namespaced`` or not (a cluster-scoped
        kind's request has no namespace, whatever the object's metadata says)."""
        return cls(namespace if namespaced else None, name)


@dataclass(frozen=True, slots=True)
class Result:
    """Ask to be called again: after ``requeue_after`` seconds, or (``requeue=True``) with the
    rate limiter's backoff. Returning ``None`` or ``Result()`` means done until the next change."""

    requeue_after: float | None = None
    requeue: bool = False

    def __post_init__(self) -> None:
        if self.requeue_after is not None and self.requeue_after < 0:
            raise ValueError(f"Result.requeue_after must not be negative, got {self.requeue_after}")


class TerminalError(ControllerError):
    """A failure that retrying cannot fix (an invalid spec, say): logged and counted, not retried.

    The object is reconciled again only when it changes.
    """
