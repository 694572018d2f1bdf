"""crdkit: typed Kubernetes operators in Python.

Typed custom resources from pydantic classes, an asyncio controller runtime, a Rust placer for
topology-aware gang placement, and a real local control plane for tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crdkit._lazy import lazy_namespace

# The root package is lazy (PEP 562): `import crdkit.placer` or `crdkit.resources` must not pay
# for the client and the runtime (ssl, prometheus-client, kubernetes-asyncio). Each public
# name is imported from its module on first use (see crdkit._lazy); `__version__` is
# answered here.
if TYPE_CHECKING:
    from crdkit._errors import CrdkitError as CrdkitError
    from crdkit.client import AlreadyExists as AlreadyExists
    from crdkit.client import ApiError as ApiError
    from crdkit.client import Client as Client
    from crdkit.client import ClientConfig as ClientConfig
    from crdkit.client import Conflict as Conflict
    from crdkit.client import Gone as Gone
    from crdkit.client import GroupVersionKind as GroupVersionKind
    from crdkit.client import Invalid as Invalid
    from crdkit.client import KubernetesError as KubernetesError
    from crdkit.client import NotFound as NotFound
    from crdkit.client import PatchType as PatchType
    from crdkit.resources import ApiModel as ApiModel
    from crdkit.resources import CustomResource as CustomResource
    from crdkit.resources import KubernetesObject as KubernetesObject
    from crdkit.resources import ObjectMeta as ObjectMeta
    from crdkit.resources import resource_info as resource_info
    from crdkit.runtime import Condition as Condition
    from crdkit.runtime import Context as Context
    from crdkit.runtime import LeaderElectionOptions as LeaderElectionOptions
    from crdkit.runtime import Manager as Manager
    from crdkit.runtime import ManagerOptions as ManagerOptions
    from crdkit.runtime import MetricsOptions as MetricsOptions
    from crdkit.runtime import Reconciler as Reconciler
    from crdkit.runtime import Request as Request
    from crdkit.runtime import Result as Result
    from crdkit.runtime import Runnable as Runnable
    from crdkit.runtime import ShardingOptions as ShardingOptions
    from crdkit.runtime import TerminalError as TerminalError
    from crdkit.runtime import Watch as Watch
    from crdkit.runtime import WebhookServerOptions as WebhookServerOptions
    from crdkit.runtime.cache import CacheReader as CacheReader
    from crdkit.runtime.factory import SharedInformerFactory as SharedInformerFactory
    from crdkit.runtime.informer import Informer as Informer
    from crdkit.runtime.store import Store as Store

    __version__: str

_lazy_getattr, __dir__ = lazy_namespace(__name__, globals())


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from crdkit._version import VERSION

        globals()[name] = VERSION
        return VERSION
    return _lazy_getattr(name)
