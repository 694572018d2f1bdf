"""Moved to :mod:`crdkit.deploy.cli.output`."""

from crdkit._moved import alias

alias(__name__, "crdkit.deploy.cli.output")
