"""Moved to :mod:`crdkit.webhook.certs`."""

from crdkit._moved import alias

alias(__name__, "crdkit.webhook.certs")
