"""Moved to :mod:`crdkit.webhook.jsonpatch`."""

from crdkit._moved import alias

alias(__name__, "crdkit.webhook.jsonpatch")
