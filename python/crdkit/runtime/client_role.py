"""``ClientRole``: the role of a program that talks to the cluster but is no operator.

A command-line reader such as ``crdkit queue`` runs no manager: it elects no leader and
records no Events, so the Lease and Events rules an operator's role carries would be rights it
never uses. Its class declares what it touches, and ``crdkit gen-rbac mod:Class`` grants that
and nothing else::

    class QueueReader(ClientRole):
        rbac = (("", "configmaps", ("get", "list", "watch")),)

Given with reconcilers or runnables, its rules are merged into theirs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crdkit.runtime.reconciler import RbacRule

__all__ = ["ClientRole"]


class ClientRole:
    """Base class of programs that need a role but run no manager; see the module docstring."""

    rbac: ClassVar[Sequence[RbacRule]] = ()
    """What it touches, for ``crdkit gen-rbac``: ``(api_group, resource, verbs)``."""
