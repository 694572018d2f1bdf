"""Admission and conversion webhooks: what the apiserver calls before it stores an object.

::

    apiserver ─▶ WebhookServer (HTTPS, certs reloaded by CertWatcher)
                   ├─ /validate-…, /mutate-…  ─▶ Webhook(Validator, Defaulter) ─▶ JSON patch
                   └─ /convert                ─▶ Conversion(hub, spokes)
    WebhookRunner: the server's lifetime in a manager (told by RunnerOptions), and the CA
                   bundle patched into the webhook configurations and CRDs
                   (webhook_configurations)

This package sits below the controller runtime: it uses the client and the resource models,
and nothing in it imports the reconcile loop. A manager serves the webhooks its reconcilers
declare (``Reconciler.webhooks``, ``Reconciler.conversion``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit.webhook.admission import (
        AdmissionContext,
        BadReview,
        Defaulter,
        Denied,
        MatchCondition,
        Operation,
        Validator,
        Warnings,
        Webhook,
        review,
    )
    from crdkit.webhook.certs import CertWatcher, write_self_signed
    from crdkit.webhook.configuration import ServiceRef, webhook_configurations
    from crdkit.webhook.conversion import Conversion, ConversionError, convert_review
    from crdkit.webhook.errors import WebhookError
    from crdkit.webhook.jsonpatch import json_patch
    from crdkit.webhook.runner import RunnerOptions, WebhookRunner
    from crdkit.webhook.server import WebhookServer

_HOMES = {
    "crdkit.webhook.errors": ("WebhookError",),
    "crdkit.webhook.admission": (
        "AdmissionContext",
        "BadReview",
        "Defaulter",
        "Denied",
        "MatchCondition",
        "Operation",
        "Validator",
        "Warnings",
        "Webhook",
        "review",
    ),
    "crdkit.webhook.certs": ("CertWatcher", "write_self_signed"),
    "crdkit.webhook.configuration": ("ServiceRef", "webhook_configurations"),
    "crdkit.webhook.conversion": ("Conversion", "ConversionError", "convert_review"),
    "crdkit.webhook.jsonpatch": ("json_patch",),
    "crdkit.webhook.runner": ("RunnerOptions", "WebhookRunner"),
    "crdkit.webhook.server": ("WebhookServer",),
}
__getattr__, __dir__ = lazy_namespace(__name__, globals(), _HOMES)

__all__ = [
    "AdmissionContext",
    "BadReview",
    "CertWatcher",
    "Conversion",
    "ConversionError",
    "Defaulter",
    "Denied",
    "MatchCondition",
    "Operation",
    "RunnerOptions",
    "ServiceRef",
    "Validator",
    "Warnings",
    "Webhook",
    "WebhookError",
    "WebhookRunner",
    "WebhookServer",
    "convert_review",
    "json_patch",
    "review",
    "webhook_configurations",
    "write_self_signed",
]
