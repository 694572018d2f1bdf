"""Moved to :mod:`crdkit.webhook.admission`."""

from crdkit._moved import alias

alias(__name__, "crdkit.webhook.admission")
