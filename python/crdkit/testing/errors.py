"""Errors raised by the local control plane.

ControlPlaneError            something went wrong starting, driving or stopping it
 +-- BinariesNotFoundError   no folder holds both kube-apiserver and etcd
"""

from __future__ import annotations

__all__ = ["BinariesNotFoundError", "ControlPlaneError"]


class ControlPlaneError(Exception):
    """The local control plane could not do what was asked (start, restart, compact, install)."""


class BinariesNotFoundError(ControlPlaneError):
    """No folder searched holds both ``kube-apiserver`` and ``etcd``."""
