"""Deploying an operator: kustomize bases for ``config/`` and the image's Dockerfile
(``crdkit gen-manifests``). It sits on top of ``crd`` (the CRDs) and ``runtime`` (the roles,
the ``crdkit run`` command line)."""

from crdkit.deploy.dockerfile import dockerfile
from crdkit.deploy.manifests import ManifestOptions, crd_classes, operator_manifests, run_arguments

__all__ = ["ManifestOptions", "crd_classes", "dockerfile", "operator_manifests", "run_arguments"]
