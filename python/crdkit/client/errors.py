"""The one exception hierarchy of the client, mapped from the API's ``metav1.Status``.

Every failure a caller can act on has its own class, so ``except NotFound`` reads like the
intent. The class is chosen from the Status ``reason`` first (it is more precise than the HTTP
code: ``AlreadyExists`` and ``Conflict`` are both 409) and from the HTTP code otherwise::

    KubernetesError                      anything this package raises on purpose
    ├── TransportError                   no HTTP answer: connection refused/reset, TLS, timeout
    │   └── RequestTimeout               connect or read timeout of one request
    │       └── WatchIdle                a watch silent past its idle timeout (no bookmark)
    ├── DecodeError                      an answer that is not the JSON it should be
    ├── ConfigError                      no usable kubeconfig / in-cluster configuration
    └── ApiError                         the apiserver answered with an error Status
        ├── BadRequest                   400
        ├── Unauthorized                 401 (after one credential refresh)
        ├── Forbidden                    403
        ├── NotFound                     404
        ├── MethodNotAllowed             405
        ├── Conflict                     409 (reason Conflict: stale resourceVersion)
        │   └── AlreadyExists            409 (reason AlreadyExists)
        ├── Gone                         410 (reasons Gone / Expired: resourceVersion too old)
        ├── RequestEntityTooLarge        413
        ├── UnsupportedMediaType         415
        ├── Invalid                      422 (with ``causes``: one per rejected field)
        ├── TooManyRequests              429 (with ``retry_after``, after the bounded retries)
        ├── InternalError                500
        ├── ServiceUnavailable           503
        └── ServerTimeout                504, or reasons Timeout / ServerTimeout
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from crdkit._errors import CrdkitError

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "ConfigError",
    "Conflict",
    "DecodeError",
    "Forbidden",
    "Gone",
    "InternalError",
    "Invalid",
    "KubernetesError",
    "MethodNotAllowed",
    "NotFound",
    "RequestEntityTooLarge",
    "RequestTimeout",
    "ServerTimeout",
    "ServiceUnavailable",
    "StatusCause",
    "TooManyRequests",
    "TransportError",
    "Unauthorized",
    "UnsupportedMediaType",
    "WatchIdle",
    "api_error_from_response",
    "api_error_from_status",
]


class KubernetesError(CrdkitError):
    """Base of every error the client raises on purpose."""


class TransportError(KubernetesError):
    """The request got no HTTP answer (refused, reset, TLS failure, timeout)."""


class RequestTimeout(TransportError):
    """Connecting or reading took longer than the request's timeout."""


class WatchIdle(RequestTimeout):
    """A watch sent nothing, not even a bookmark, for its idle timeout: a dead connection, or
    a quiet resource whose watch cache had no newer resourceVersion to bookmark. Resuming from
    the last resourceVersion is cheap either way, so an informer does it without a warning."""


class DecodeError(KubernetesError):
    """The apiserver's answer could not be decoded into the expected shape."""


class ConfigError(KubernetesError):
    """The client could not be configured (kubeconfig, in-cluster files, credentials)."""


@dataclass(frozen=True)
class StatusCause:
    """One reason an object was rejected: usually a field path and what is wrong with it."""

    reason: str
    message: str
    field: str

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StatusCause:
        return cls(
            reason=str(data.get("reason", "")),
            message=str(data.get("message", "")),
            field=str(data.get("field", "")),
        )


class ApiError(KubernetesError):
    """The apiserver answered with an error ``Status``; its fields are kept as attributes."""

    def __init__(
        self,
        message: str,
        *,
        code: int,
        reason: str = "",
        details: dict[str, Any] | None = None,
        status: dict[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{code} {reason or 'Error'}: {message}")
        self.message = message
        self.code = code
        self.reason = reason
        self.details: dict[str, Any] = details or {}
        self.status: dict[str, Any] = status or {}
        self._retry_after_header = retry_after

    @property
    def causes(self) -> list[StatusCause]:
        """The per-field causes the server listed (empty when it gave none)."""
        return [StatusCause.from_dict(c) for c in self.details.get("causes", []) or []]

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asked the client to wait, when it said (in the Status's
        ``details.retryAfterSeconds`` or, failing that, a ``Retry-After`` header)."""
        seconds = self.details.get("retryAfterSeconds")
        if seconds is not None:
            return float(seconds)
        return self._retry_after_header


class BadRequest(ApiError):
    """400: the request itself is malformed."""


class Unauthorized(ApiError):
    """401: the credentials were refused (even after refreshing them once)."""


class Forbidden(ApiError):
    """403: authenticated, but RBAC (or an admission plugin) does not allow it."""


class NotFound(ApiError):
    """404: no such object, or no such resource type."""


class MethodNotAllowed(ApiError):
    """405: the resource does not support this verb."""


class Conflict(ApiError):
    """409: the object changed since it was read (optimistic concurrency); re-read and retry."""


class AlreadyExists(Conflict):
    """409 with reason AlreadyExists: create of a name that is taken."""


class Gone(ApiError):
    """410: the requested resourceVersion is older than what etcd still keeps; relist."""


class RequestEntityTooLarge(ApiError):
    """413: the object is larger than the apiserver accepts."""


class UnsupportedMediaType(ApiError):
    """415: the content type is not accepted (e.g. strategic merge patch on a custom resource)."""


class Invalid(ApiError):
    """422: validation failed; ``causes`` names every rejected field."""

    def __str__(self) -> str:
        causes = "; ".join(f"{c.field}: {c.message}" for c in self.causes if c.field)
        base = super().__str__()
        return f"{base} [{causes}]" if causes and causes not in base else base


class TooManyRequests(ApiError):
    """429: throttled (API priority and fairness); the client already retried within bounds."""


class InternalError(ApiError):
    """500: the apiserver failed."""


class ServiceUnavailable(ApiError):
    """503: the apiserver (or an aggregated API) is not available right now."""


class ServerTimeout(ApiError):
    """The server could not finish in time (504, or reasons Timeout / ServerTimeout)."""


_BY_REASON: dict[str, type[ApiError]] = {
    "BadRequest": BadRequest,
    "Unauthorized": Unauthorized,
    "Forbidden": Forbidden,
    "NotFound": NotFound,
    "MethodNotAllowed": MethodNotAllowed,
    "AlreadyExists": AlreadyExists,
    "Conflict": Conflict,
    "Gone": Gone,
    "Expired": Gone,
    "RequestEntityTooLarge": RequestEntityTooLarge,
    "UnsupportedMediaType": UnsupportedMediaType,
    "Invalid": Invalid,
    "TooManyRequests": TooManyRequests,
    "InternalError": InternalError,
    "ServiceUnavailable": ServiceUnavailable,
    "Timeout": ServerTimeout,
    "ServerTimeout": ServerTimeout,
}

_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    410: Gone,
    413: RequestEntityTooLarge,
    415: UnsupportedMediaType,
    422: Invalid,
    429: TooManyRequests,
    500: InternalError,
    503: ServiceUnavailable,
    504: ServerTimeout,
}


def api_error_from_status(
    status: dict[str, Any], http_code: int | None = None, *, retry_after: float | None = None
) -> ApiError:
    """The exception for a ``metav1.Status`` (from a response body or a watch ERROR event)."""
    code = int(status.get("code") or http_code or 500)
    reason = str(status.get("reason") or "")
    message = str(status.get("message") or reason or f"HTTP {code}")
    details = status.get("details")
    cls = _BY_REASON.get(reason) or _BY_CODE.get(code) or ApiError
    return cls(
        message,
        code=code,
        reason=reason,
        details=details if isinstance(details, dict) else None,
        status=status,
        retry_after=retry_after,
    )


def api_error_from_response(
    http_code: int, body: bytes, *, retry_after: float | None = None
) -> ApiError:
    """The exception for an HTTP error answer, whether or not its body is a Status.

    ``retry_after`` is the answer's ``Retry-After`` header, in seconds, if it had one.
    """
    try:
        data = json.loads(body) if body else None
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("kind") == "Status":
        return api_error_from_status(data, http_code, retry_after=retry_after)
    text = body.decode("utf-8", "replace").strip()[:500]
    return api_error_from_status(
        {"code": http_code, "message": text}, http_code, retry_after=retry_after
    )
