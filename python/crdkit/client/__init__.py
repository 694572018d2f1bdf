"""The async Kubernetes client: typed CRUD, list, watch, errors and configuration.

from crdkit.client import Client
from crdkit.resources import Pod

async with Client.from_control_plane(plane) as client:
    pod = await client.get(Pod, "web-0", namespace="default")
"""

from __future__ import annotations

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
from crdkit.client.codec import ListPage
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
)
from crdkit.client.objects import object_key
from crdkit.client.retry import Backoff, RetryPolicy
from crdkit.client.transport import TcpKeepalive
from crdkit.client.watch import ADDED, BOOKMARK, DELETED, MODIFIED, WatchEvent

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
    "Forbidden",
    "Gone",
    "GroupVersionKind",
    "InternalError",
    "Invalid",
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
    "object_key",
]
