"""A real control plane on this machine: etcd and kube-apiserver as child processes, built by
``make envtest`` (``tools/envtest``) or found in ``KUBEBUILDER_ASSETS`` or setup-envtest's store.

``ControlPlane`` starts and stops them, installs CRDs (``load_crds``), makes namespaces and
users (``users``: restricted kubeconfigs, ServiceAccount tokens); ``crdkit envtest`` runs one
from the command line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit.testing.envtest.binaries import Binaries, candidate_folders, find_binaries
    from crdkit.testing.envtest.control_plane import ControlPlane
    from crdkit.testing.envtest.crds import (
        CrdSource,
        crd_is_established,
        load_crds,
        served_versions,
    )
    from crdkit.testing.envtest.users import (
        restricted_kubeconfig,
        service_account_token,
        token_kubeconfig,
    )

_HOMES = {
    "crdkit.testing.envtest.binaries": (
        "Binaries",
        "candidate_folders",
        "find_binaries",
    ),
    "crdkit.testing.envtest.control_plane": ("ControlPlane",),
    "crdkit.testing.envtest.crds": (
        "CrdSource",
        "crd_is_established",
        "load_crds",
        "served_versions",
    ),
    "crdkit.testing.envtest.users": (
        "restricted_kubeconfig",
        "service_account_token",
        "token_kubeconfig",
    ),
}
__getattr__, __dir__ = lazy_namespace(__name__, globals(), _HOMES)

__all__ = [
    "Binaries",
    "ControlPlane",
    "CrdSource",
    "candidate_folders",
    "crd_is_established",
    "find_binaries",
    "load_crds",
    "restricted_kubeconfig",
    "served_versions",
    "service_account_token",
    "token_kubeconfig",
]
