"""``WebhookError``: the root of what the webhooks raise: ``Denied`` (a request refused, with
its HTTP code), ``BadReview`` (an AdmissionReview that cannot be read) and ``ConversionError``."""

from __future__ import annotations

from crdkit._errors import CrdkitError

__all__ = ["WebhookError"]


class WebhookError(CrdkitError):
    """Raised by admission and conversion webhooks."""
