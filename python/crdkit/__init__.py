"""crdkit: typed Kubernetes operators in Python.

Typed custom resources from pydantic classes, an asyncio controller runtime, a Rust placer for
topology-aware gang placement, and a real local control plane for tests.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

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

try:
    __version__ = version("crdkit")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = [
    "ApiModel",
    "Condition",
    "Context",
    "CustomResource",
    "KubernetesObject",
    "Manager",
    "ObjectMeta",
    "Reconciler",
    "Request",
    "Result",
    "TerminalError",
    "__version__",
    "resource_info",
]
