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
    from crdkit.webhook.admission import AdmissionContext as AdmissionContext
    from crdkit.webhook.admission import BadReview as BadReview
    from crdkit.webhook.admission import Defaulter as Defaulter
    from crdkit.webhook.admission import Denied as Denied
    from crdkit.webhook.admission import MatchCondition as MatchCondition
    from crdkit.webhook.admission import Operation as Operation
    from crdkit.webhook.admission import Validator as Validator
    from crdkit.webhook.admission import Warnings as Warnings
    from crdkit.webhook.admission import Webhook as Webhook
    from crdkit.webhook.admission import review as review
    from crdkit.webhook.certs import CertWatcher as CertWatcher
    from crdkit.webhook.certs import write_self_signed as write_self_signed
    from crdkit.webhook.configuration import ServiceRef as ServiceRef
    from crdkit.webhook.configuration import webhook_configurations as webhook_configurations
    from crdkit.webhook.conversion import Conversion as Conversion
    from crdkit.webhook.conversion import ConversionError as ConversionError
    from crdkit.webhook.conversion import convert_review as convert_review
    from crdkit.webhook.errors import WebhookError as WebhookError
    from crdkit.webhook.jsonpatch import json_patch as json_patch
    from crdkit.webhook.runner import RunnerOptions as RunnerOptions
    from crdkit.webhook.runner import WebhookRunner as WebhookRunner
    from crdkit.webhook.server import WebhookServer as WebhookServer

__getattr__, __dir__ = lazy_namespace(__name__, globals())
