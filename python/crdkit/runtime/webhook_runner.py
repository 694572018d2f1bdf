"""Moved to :mod:`crdkit.webhook.runner`."""

from crdkit._moved import alias

alias(__name__, "crdkit.webhook.runner")
