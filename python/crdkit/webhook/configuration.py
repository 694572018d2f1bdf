"""The ``ValidatingWebhookConfiguration`` and ``MutatingWebhookConfiguration`` of webhooks, as
``crdkit gen-webhooks`` writes them and the Manager installs them in development.

The apiserver reaches the webhooks through a Service (in a cluster) or a URL (a manager on the
developer's machine, or a test's local control plane). ``caBundle`` is the CA that signed the
serving certificate; with cert-manager it is left out and its cainjector fills it in from the
``cert-manager.io/inject-ca-from`` annotation.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from crdkit.webhook.admission import Webhook

__all__ = ["ServiceRef", "webhook_configurations"]


@dataclass(frozen=True)
class ServiceRef:
    """The Service in front of the manager's webhook port."""

    name: str
    namespace: str
    port: int = 443

    def __post_init__(self) -> None:
        if not 1 <= self.port <= 65535:
            raise ValueError(f"service port must be 1 to 65535, got {self.port}")


def _client_config(
    path: str, service: ServiceRef | None, url: str | None, ca_bundle: bytes | None
) -> dict[str, Any]:
    config: dict[str, Any]
    if service is not None:
        config = {
            "service": {
                "name": service.name,
                "namespace": service.namespace,
                "path": path,
                "port": service.port,
            }
        }
    else:
        assert url is not None
        config = {"url": url.rstrip("/") + path}
    if ca_bundle is not None:
        config["caBundle"] = base64.b64encode(ca_bundle).decode()
    return config


def _entry(
    webhook: Webhook[Any],
    *,
    mutate: bool,
    service: ServiceRef | None,
    url: str | None,
    ca_bundle: bytes | None,
) -> dict[str, Any]:
    info = webhook.info
    path = webhook.mutate_path if mutate else webhook.validate_path
    entry: dict[str, Any] = {
        # A webhook's name must be fully qualified; controller-runtime's scaffold uses
        # v<kind>.kb.io, a kind's own group is unique to it.
        "name": f"{'m' if mutate else 'v'}{info.kind.lower()}.{info.group}",
        "admissionReviewVersions": ["v1"],
        "clientConfig": _client_config(path, service, url, ca_bundle),
        "failurePolicy": webhook.failure_policy,
        "sideEffects": webhook.side_effects,
        "timeoutSeconds": webhook.timeout_seconds,
        "rules": [
            {
                "apiGroups": [info.group],
                "apiVersions": [info.version],
                "operations": list(
                    webhook.mutate_operations if mutate else webhook.validate_operations
                ),
                "resources": [info.plural],
                "scope": "Namespaced" if info.namespaced else "Cluster",
            }
        ],
    }
    if mutate:
        entry["reinvocationPolicy"] = "Never"
    if webhook.match_conditions:
        entry["matchConditions"] = [
            {"name": c.name, "expression": c.expression} for c in webhook.match_conditions
        ]
    return entry


def webhook_configurations(
    webhooks: Sequence[Webhook[Any]],
    *,
    name: str,
    service: ServiceRef | None = None,
    url: str | None = None,
    ca_bundle: bytes | None = None,
    annotations: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The configurations (each only if some webhook needs it) named ``name``, reaching the
    webhooks through ``service`` or at ``url`` (``https://host:port``, the paths appended)."""
    if (service is None) == (url is None):
        raise ValueError("give exactly one of service and url")
    if url is not None and not url.startswith("https://"):
        raise ValueError(
            f"url must start with https:// (webhooks are served over TLS), got {url!r}"
        )
    kinds: dict[tuple[str, str], str] = {}
    for webhook in webhooks:
        info = webhook.info
        key = (info.api_version, info.kind)
        if key in kinds:
            raise ValueError(f"two webhooks for {info.kind} ({info.api_version}): one per kind")
        kinds[key] = info.kind
    metadata: dict[str, Any] = {"name": name}
    if annotations:
        metadata["annotations"] = dict(annotations)
    out: list[dict[str, Any]] = []
    for mutate, kind in (
        (True, "MutatingWebhookConfiguration"),
        (False, "ValidatingWebhookConfiguration"),
    ):
        entries = [
            _entry(w, mutate=mutate, service=service, url=url, ca_bundle=ca_bundle)
            for w in webhooks
            if (w.defaulter if mutate else w.validator) is not None
        ]
        if entries:
            out.append(
                {
                    "apiVersion": "admissionregistration.k8s.io/v1",
                    "kind": kind,
                    "metadata": dict(metadata),
                    "webhooks": entries,
                }
            )
    return out
