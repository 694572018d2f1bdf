"""Moved to :mod:`crdkit.deploy.cli.rbac`."""

from crdkit._moved import alias

alias(__name__, "crdkit.deploy.cli.rbac")
