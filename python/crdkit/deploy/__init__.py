"""Deploying an operator: every generator and its command. ``crdkit gen-manifests`` writes the
kustomize bases of ``config/`` and the image's Dockerfile, ``crdkit gen-rbac`` the least
privilege roles (and ``--check`` compares roles someone wrote), ``crdkit gen-webhooks`` the
webhook configurations.

It reads declarations (the CRDs from ``crd``, the reconcilers' watches, webhooks and setup from
``runtime``) and writes files; it never talks to a cluster, so it loads no HTTP stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit.deploy.container_image import dockerfile
    from crdkit.deploy.errors import DeployError
    from crdkit.deploy.manifests import (
        ManifestOptions,
        crd_classes,
        operator_manifests,
        run_arguments,
    )
    from crdkit.deploy.rbac import rbac_documents, rbac_rules
    from crdkit.deploy.role_check import missing_permissions

_HOMES = {
    "crdkit.deploy.errors": ("DeployError",),
    "crdkit.deploy.container_image": ("dockerfile",),
    "crdkit.deploy.manifests": (
        "ManifestOptions",
        "crd_classes",
        "operator_manifests",
        "run_arguments",
    ),
    "crdkit.deploy.rbac": ("rbac_documents", "rbac_rules"),
    "crdkit.deploy.role_check": ("missing_permissions",),
}
__getattr__, __dir__ = lazy_namespace(__name__, globals(), _HOMES)

__all__ = [
    "DeployError",
    "ManifestOptions",
    "crd_classes",
    "dockerfile",
    "missing_permissions",
    "operator_manifests",
    "rbac_documents",
    "rbac_rules",
    "run_arguments",
]
