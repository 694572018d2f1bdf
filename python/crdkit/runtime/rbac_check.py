"""Moved to :mod:`crdkit.deploy.role_check`."""

from crdkit._moved import alias

alias(__name__, "crdkit.deploy.role_check")
