"""Moved to :mod:`crdkit.deploy.cli.webhooks`."""

from crdkit._moved import alias

alias(__name__, "crdkit.deploy.cli.webhooks")
