"""Moved to :mod:`crdkit.webhook.server`."""

from crdkit._moved import alias

alias(__name__, "crdkit.webhook.server")
