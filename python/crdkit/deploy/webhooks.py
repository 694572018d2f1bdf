"""The webhook part of ``config/``, when the reconcilers declare ``webhooks`` or
``conversions``, as kubebuilder scaffolds it with cert-manager:

::

    config/
      webhook/       the Service in front of the manager's port 9443, and the
                     Validating/MutatingWebhookConfiguration (gen-webhooks) calling it
      certmanager/   a self-signed Issuer and the serving Certificate for that Service, whose
                     Secret the Deployment mounts as --webhook-cert-dir

cert-manager's cainjector fills the configurations' and the converting CRDs' ``caBundle`` from
their ``cert-manager.io/inject-ca-from`` annotation; the manager reloads the renewed Secret by
itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crdkit.deploy.rbac import source_class
from crdkit.runtime.reconciler import Reconciler
from crdkit.webhook.configuration import ServiceRef, webhook_configurations
from crdkit.webhook.conversion import CONVERT_PATH

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from crdkit.deploy.manifests import ManifestOptions
    from crdkit.deploy.rbac import RbacSource
    from crdkit.webhook.admission import Webhook
    from crdkit.webhook.conversion import Conversion

__all__ = ["CERT_DIR", "WEBHOOK_PORT", "WebhookManifests"]

WEBHOOK_PORT = 9443
CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"
_INJECT = "cert-manager.io/inject-ca-from"


class WebhookManifests:
    """The webhook documents of ``options``'s operator; empty when nothing declares any."""

    def __init__(
        self,
        sources: Sequence[RbacSource],
        options: ManifestOptions,
        *,
        labels: Callable[[], dict[str, str]],
    ) -> None:
        self.options = options
        # A function: a new dict each time (a shared one would come out as YAML aliases).
        self._labels = labels
        self.webhooks: list[Webhook[Any]] = []
        self.conversions: list[Conversion] = []
        for source in map(source_class, sources):
            if issubclass(source, Reconciler):
                self.webhooks.extend(source.webhooks)
                self.conversions.extend(source.conversions)

    def __bool__(self) -> bool:
        return bool(self.webhooks or self.conversions)

    @property
    def service(self) -> ServiceRef:
        return ServiceRef(f"{self.options.name}-webhook-service", self.options.operator_namespace)

    @property
    def secret(self) -> str:
        return f"{self.options.name}-webhook-server-cert"

    @property
    def certificate(self) -> str:
        return f"{self.options.name}-serving-cert"

    @property
    def inject_from(self) -> str:
        return f"{self.options.operator_namespace}/{self.certificate}"

    def files(self) -> dict[str, list[dict[str, Any]]]:
        """``config/``'s webhook files (the kustomizations of their folders are the caller's)."""
        namespace = self.options.operator_namespace
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": self.service.name,
                "namespace": namespace,
                "labels": self._labels(),
            },
            "spec": {
                "selector": self._labels(),
                "ports": [
                    {"name": "webhook", "port": 443, "targetPort": "webhook", "protocol": "TCP"}
                ],
            },
        }
        issuer = f"{self.options.name}-selfsigned-issuer"
        host = f"{self.service.name}.{namespace}.svc"
        certificates = [
            {
                "apiVersion": "cert-manager.io/v1",
                "kind": "Issuer",
                "metadata": {"name": issuer, "namespace": namespace, "labels": self._labels()},
                "spec": {"selfSigned": {}},
            },
            {
                "apiVersion": "cert-manager.io/v1",
                "kind": "Certificate",
                "metadata": {
                    "name": self.certificate,
                    "namespace": namespace,
                    "labels": self._labels(),
                },
                "spec": {
                    "dnsNames": [host, f"{host}.cluster.local"],
                    "issuerRef": {"kind": "Issuer", "name": issuer},
                    "secretName": self.secret,
                },
            },
        ]
        files: dict[str, list[dict[str, Any]]] = {"webhook/service.yaml": [service]}
        if self.webhooks:
            files["webhook/manifests.yaml"] = webhook_configurations(
                self.webhooks,
                name=self.options.name,
                service=self.service,
                annotations={_INJECT: self.inject_from},
            )
        files["certmanager/certificate.yaml"] = certificates
        return files

    def serve_from(self, deployment: dict[str, Any]) -> None:
        """Give the manager Deployment the webhook port and the Certificate's Secret."""
        pod = deployment["spec"]["template"]["spec"]
        container = pod["containers"][0]
        container["command"] += [
            "--webhook-port",
            str(WEBHOOK_PORT),
            "--webhook-cert-dir",
            CERT_DIR,
        ]
        container["ports"].append(
            {"name": "webhook", "containerPort": WEBHOOK_PORT, "protocol": "TCP"}
        )
        container["volumeMounts"].append({"name": "cert", "mountPath": CERT_DIR, "readOnly": True})
        pod["volumes"].append({"name": "cert", "secret": {"secretName": self.secret}})

    def convert_through(self, crd: dict[str, Any]) -> None:
        """Point a CRD whose kind has a Conversion at the webhook Service."""
        kinds = {c.group_kind for c in self.conversions}
        spec = crd["spec"]
        if (spec["group"], spec["names"]["kind"]) not in kinds:
            return
        crd["metadata"].setdefault("annotations", {})[_INJECT] = self.inject_from
        spec["conversion"] = {
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {
                    "service": {
                        "name": self.service.name,
                        "namespace": self.service.namespace,
                        "path": CONVERT_PATH,
                        "port": self.service.port,
                    }
                },
                "conversionReviewVersions": ["v1"],
            },
        }
