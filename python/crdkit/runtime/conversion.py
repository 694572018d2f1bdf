"""Moved to :mod:`crdkit.webhook.conversion`."""

from crdkit._moved import alias

alias(__name__, "crdkit.webhook.conversion")
