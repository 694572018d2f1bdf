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
    from crdkit.deploy.container_image import dockerfile as dockerfile
    from crdkit.deploy.errors import DeployError as DeployError
    from crdkit.deploy.manifests import ManifestOptions as ManifestOptions
    from crdkit.deploy.manifests import crd_classes as crd_classes
    from crdkit.deploy.manifests import operator_manifests as operator_manifests
    from crdkit.deploy.manifests import run_arguments as run_arguments
    from crdkit.deploy.rbac import rbac_documents as rbac_documents
    from crdkit.deploy.rbac import rbac_rules as rbac_rules
    from crdkit.deploy.role_check import missing_permissions as missing_permissions

__getattr__, __dir__ = lazy_namespace(__name__, globals())
