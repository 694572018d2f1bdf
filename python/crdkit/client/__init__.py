"""The async Kubernetes client: typed CRUD, list, watch, errors and configuration.

from crdkit.client import Client
from crdkit.resources import Pod

async with Client.from_control_plane(plane) as client:
    pod = await client.get(Pod, "web-0", namespace="default")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit.client.auth import (
        Credentials,
        ExecCredentials,
        NoCredentials,
        StaticCredentials,
        TokenFileCredentials,
    )
    from crdkit.client.client import (
        Client,
        ContinueExpired,
        PatchType,
        Preconditions,
        PropagationPolicy,
        ResolvedResource,
    )
    from crdkit.client.codec import FieldIssue, InvalidObject, ListPage
    from crdkit.client.config import ClientConfig, Timeouts
    from crdkit.client.discovery import GroupVersionKind
    from crdkit.client.errors import (
        AlreadyExists,
        ApiError,
        BadRequest,
        ConfigError,
        Conflict,
        DecodeError,
        Forbidden,
        Gone,
        InternalError,
        Invalid,
        KubernetesError,
        MethodNotAllowed,
        NotFound,
        RequestEntityTooLarge,
        RequestTimeout,
        ServerTimeout,
        ServiceUnavailable,
        StatusCause,
        TooManyRequests,
        TransportError,
        Unauthorized,
        UnsupportedMediaType,
        WatchIdle,
    )
    from crdkit.client.objects import object_key
    from crdkit.client.retry import Backoff, RetryPolicy
    from crdkit.client.transport import TcpKeepalive
    from crdkit.client.watch import ADDED, BOOKMARK, DELETED, MODIFIED, WatchEvent

# Lazy (PEP 562, see crdkit._lazy): importing one name loads only its module and what it needs.
_HOMES = {
    "crdkit.client.auth": (
        "Credentials",
        "ExecCredentials",
        "NoCredentials",
        "StaticCredentials",
        "TokenFileCredentials",
    ),
    "crdkit.client.client": (
        "Client",
        "ContinueExpired",
        "PatchType",
        "Preconditions",
        "PropagationPolicy",
        "ResolvedResource",
    ),
    "crdkit.client.codec": ("FieldIssue", "InvalidObject", "ListPage"),
    "crdkit.client.config": (
        "ClientConfig",
        "Timeouts",
    ),
    "crdkit.client.discovery": ("GroupVersionKind",),
    "crdkit.client.errors": (
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
    ),
    "crdkit.client.objects": ("object_key",),
    "crdkit.client.retry": (
        "Backoff",
        "RetryPolicy",
    ),
    "crdkit.client.transport": ("TcpKeepalive",),
    "crdkit.client.watch": (
        "ADDED",
        "BOOKMARK",
        "DELETED",
        "MODIFIED",
        "WatchEvent",
    ),
}
__getattr__, __dir__ = lazy_namespace(__name__, globals(), _HOMES)

__all__ = [
    "ADDED",
    "BOOKMARK",
    "DELETED",
    "MODIFIED",
    "AlreadyExists",
    "ApiError",
    "Backoff",
    "BadRequest",
    "Client",
    "ClientConfig",
    "ConfigError",
    "Conflict",
    "ContinueExpired",
    "Credentials",
    "DecodeError",
    "ExecCredentials",
    "FieldIssue",
    "Forbidden",
    "Gone",
    "GroupVersionKind",
    "InternalError",
    "Invalid",
    "InvalidObject",
    "KubernetesError",
    "ListPage",
    "MethodNotAllowed",
    "NoCredentials",
    "NotFound",
    "PatchType",
    "Preconditions",
    "PropagationPolicy",
    "RequestEntityTooLarge",
    "RequestTimeout",
    "ResolvedResource",
    "RetryPolicy",
    "ServerTimeout",
    "ServiceUnavailable",
    "StaticCredentials",
    "StatusCause",
    "TcpKeepalive",
    "Timeouts",
    "TokenFileCredentials",
    "TooManyRequests",
    "TransportError",
    "Unauthorized",
    "UnsupportedMediaType",
    "WatchEvent",
    "WatchIdle",
    "object_key",
]
