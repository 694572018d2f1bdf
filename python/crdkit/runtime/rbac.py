"""Moved to :mod:`crdkit.deploy.rbac`."""

from crdkit._moved import alias

alias(__name__, "crdkit.deploy.rbac")
