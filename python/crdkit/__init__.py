"""crdkit: typed Kubernetes operators in Python.

Typed custom resources from pydantic classes, an asyncio controller runtime, a Rust placer for
topology-aware gang placement, and a real local control plane for tests.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from crdkit.client import (
    AlreadyExists,
    ApiError,
    Client,
    ClientConfig,
    Conflict,
    Gone,
    GroupVersionKind,
    Invalid,
    KubernetesError,
    NotFound,
    PatchType,
)
from crdkit.resources import ApiModel, CustomResource, KubernetesObject, ObjectMeta, resource_info
from crdkit.runtime import (
    Condition,
    Context,
    Manager,
    Reconciler,
    Request,
    Result,
    TerminalError,
)
from crdkit.runtime.cache import CacheReader
from crdkit.runtime.factory import SharedInformerFactory
from crdkit.runtime.informer import Informer
from crdkit.runtime.store import Store

try:
    __version__ = version("crdkit")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = [
    "AlreadyExists",
    "ApiError",
    "ApiModel",
    "CacheReader",
    "Client",
    "ClientConfig",
    "Condition",
    "Conflict",
    "Context",
    "CustomResource",
    "Gone",
    "GroupVersionKind",
    "Informer",
    "Invalid",
    "KubernetesError",
    "KubernetesObject",
    "Manager",
    "NotFound",
    "ObjectMeta",
    "PatchType",
    "Reconciler",
    "Request",
    "Result",
    "SharedInformerFactory",
    "Store",
    "TerminalError",
    "__version__",
    "resource_info",
]
