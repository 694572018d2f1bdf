"""crdkit: typed Kubernetes operators in Python.

Typed custom resources from pydantic classes, an asyncio controller runtime, a Rust placer for
topology-aware gang placement, and a real local control plane for tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit._errors import CrdkitError
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
    from crdkit.resources import (
        ApiModel,
        CustomResource,
        KubernetesObject,
        ObjectMeta,
        resource_info,
    )
    from crdkit.runtime import (
        Condition,
        Context,
        LeaderElectionOptions,
        Manager,
        ManagerOptions,
        MetricsOptions,
        Reconciler,
        Request,
        Result,
        Runnable,
        ShardingOptions,
        TerminalError,
        Watch,
        WebhookServerOptions,
    )
    from crdkit.runtime.cache import CacheReader
    from crdkit.runtime.factory import SharedInformerFactory
    from crdkit.runtime.informer import Informer
    from crdkit.runtime.store import Store

    __version__: str

# The root package is lazy (PEP 562): `import crdkit.placer` or `crdkit.resources` must not pay
# for the client and the runtime (ssl, prometheus-client, kubernetes-asyncio). Each public
# name is imported from its module on first use.
_HOMES = {
    "crdkit._errors": ("CrdkitError",),
    "crdkit.client": (
        "AlreadyExists",
        "ApiError",
        "Client",
        "ClientConfig",
        "Conflict",
        "Gone",
        "GroupVersionKind",
        "Invalid",
        "KubernetesError",
        "NotFound",
        "PatchType",
    ),
    "crdkit.resources": (
        "ApiModel",
        "CustomResource",
        "KubernetesObject",
        "ObjectMeta",
        "resource_info",
    ),
    "crdkit.runtime": (
        "Condition",
        "Context",
        "LeaderElectionOptions",
        "Manager",
        "ManagerOptions",
        "MetricsOptions",
        "Reconciler",
        "Request",
        "Result",
        "Runnable",
        "ShardingOptions",
        "TerminalError",
        "Watch",
        "WebhookServerOptions",
    ),
    "crdkit.runtime.cache": ("CacheReader",),
    "crdkit.runtime.factory": ("SharedInformerFactory",),
    "crdkit.runtime.informer": ("Informer",),
    "crdkit.runtime.store": ("Store",),
}
_lazy_getattr, _lazy_dir = lazy_namespace(__name__, globals(), _HOMES)


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from crdkit._version import VERSION

        globals()[name] = VERSION
        return VERSION
    return _lazy_getattr(name)


def __dir__() -> list[str]:
    return sorted({*_lazy_dir(), "__version__"})


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
    "CrdkitError",
    "CustomResource",
    "Gone",
    "GroupVersionKind",
    "Informer",
    "Invalid",
    "KubernetesError",
    "KubernetesObject",
    "LeaderElectionOptions",
    "Manager",
    "ManagerOptions",
    "MetricsOptions",
    "NotFound",
    "ObjectMeta",
    "PatchType",
    "Reconciler",
    "Request",
    "Result",
    "Runnable",
    "ShardingOptions",
    "SharedInformerFactory",
    "Store",
    "TerminalError",
    "Watch",
    "WebhookServerOptions",
    "__version__",
    "resource_info",
]
