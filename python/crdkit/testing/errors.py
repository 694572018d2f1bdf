"""Errors raised by the test kit.

KitError                     the root: raised by crdkit.testing
 +-- ControlPlaneError       something went wrong starting, driving or stopping it
 |    +-- BinariesNotFoundError   no folder holds both kube-apiserver and etcd
 +-- UnknownKind             the fake cluster does not serve that kind (also a LookupError)
 +-- PatchError              a patch the fake cluster cannot apply (also a ValueError)
 +-- CrashConsistencyError   a crash scenario failed under a fault (also an AssertionError)
 +-- OperatorKilled          a crash-killed operator's call (also the client's TransportError)
"""

from __future__ import annotations

from crdkit._errors import CrdkitError

__all__ = ["BinariesNotFoundError", "ControlPlaneError", "KitError"]


class KitError(CrdkitError):
    """Raised by the test kit (named so pytest never takes it for a test class)."""


class ControlPlaneError(KitError):
    """The local control plane could not do what was asked (start, restart, compact, install)."""


class BinariesNotFoundError(ControlPlaneError):
    """No folder searched holds both ``kube-apiserver`` and ``etcd``."""
