"""The async Kubernetes client: typed CRUD, list, watch, errors and configuration.

from crdkit.client import Client
from crdkit.resources import Pod

async with Client.from_control_plane(plane) as client:
    pod = await client.get(Pod, "web-0", namespace="default")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

# Lazy (PEP 562, see crdkit._lazy): importing one name loads only its module and what it needs.
if TYPE_CHECKING:
    from crdkit.client.auth import Credentials as Credentials
    from crdkit.client.auth import ExecCredentials as ExecCredentials
    from crdkit.client.auth import NoCredentials as NoCredentials
    from crdkit.client.auth import StaticCredentials as StaticCredentials
    from crdkit.client.auth import TokenFileCredentials as TokenFileCredentials
    from crdkit.client.client import Client as Client
    from crdkit.client.client import ContinueExpired as ContinueExpired
    from crdkit.client.client import PatchType as PatchType
    from crdkit.client.client import Preconditions as Preconditions
    from crdkit.client.client import PropagationPolicy as PropagationPolicy
    from crdkit.client.client import ResolvedResource as ResolvedResource
    from crdkit.client.codec import FieldIssue as FieldIssue
    from crdkit.client.codec import InvalidObject as InvalidObject
    from crdkit.client.codec import ListPage as ListPage
    from crdkit.client.config import ClientConfig as ClientConfig
    from crdkit.client.config import Timeouts as Timeouts
    from crdkit.client.discovery import GroupVersionKind as GroupVersionKind
    from crdkit.client.errors import AlreadyExists as AlreadyExists
    from crdkit.client.errors import ApiError as ApiError
    from crdkit.client.errors import BadRequest as BadRequest
    from crdkit.client.errors import ConfigError as ConfigError
    from crdkit.client.errors import Conflict as Conflict
    from crdkit.client.errors import DecodeError as DecodeError
    from crdkit.client.errors import Forbidden as Forbidden
    from crdkit.client.errors import Gone as Gone
    from crdkit.client.errors import InternalError as InternalError
    from crdkit.client.errors import Invalid as Invalid
    from crdkit.client.errors import KubernetesError as KubernetesError
    from crdkit.client.errors import MethodNotAllowed as MethodNotAllowed
    from crdkit.client.errors import NotFound as NotFound
    from crdkit.client.errors import RequestEntityTooLarge as RequestEntityTooLarge
    from crdkit.client.errors import RequestTimeout as RequestTimeout
    from crdkit.client.errors import ServerTimeout as ServerTimeout
    from crdkit.client.errors import ServiceUnavailable as ServiceUnavailable
    from crdkit.client.errors import StatusCause as StatusCause
    from crdkit.client.errors import TooManyRequests as TooManyRequests
    from crdkit.client.errors import TransportError as TransportError
    from crdkit.client.errors import Unauthorized as Unauthorized
    from crdkit.client.errors import UnsupportedMediaType as UnsupportedMediaType
    from crdkit.client.errors import WatchIdle as WatchIdle
    from crdkit.client.objects import object_key as object_key
    from crdkit.client.retry import Backoff as Backoff
    from crdkit.client.retry import RetryPolicy as RetryPolicy
    from crdkit.client.transport import TcpKeepalive as TcpKeepalive
    from crdkit.client.watch import ADDED as ADDED
    from crdkit.client.watch import BOOKMARK as BOOKMARK
    from crdkit.client.watch import DELETED as DELETED
    from crdkit.client.watch import MODIFIED as MODIFIED
    from crdkit.client.watch import WatchEvent as WatchEvent

__getattr__, __dir__ = lazy_namespace(__name__, globals())
