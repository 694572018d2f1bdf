"""Moved to :mod:`crdkit.webhook.configuration`."""

from crdkit._moved import alias

alias(__name__, "crdkit.webhook.configuration")
