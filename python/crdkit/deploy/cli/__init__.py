"""The deploy room's commands: ``crdkit gen-manifests``, ``gen-rbac`` and ``gen-webhooks``.

Each command is its own module, imported by ``crdkit.cli`` only when it is run; none of them
loads an HTTP stack (they write files, they do not talk to a cluster).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit.deploy.cli.manifests import gen_manifests
    from crdkit.deploy.cli.rbac import gen_rbac
    from crdkit.deploy.cli.webhooks import gen_webhooks

# ``from crdkit.deploy.cli import gen_manifests`` was this package's path when it was one module.
__getattr__, __dir__ = lazy_namespace(
    __name__,
    globals(),
    {
        "crdkit.deploy.cli.manifests": ("gen_manifests",),
        "crdkit.deploy.cli.rbac": ("gen_rbac",),
        "crdkit.deploy.cli.webhooks": ("gen_webhooks",),
    },
)

__all__ = ["gen_manifests", "gen_rbac", "gen_webhooks"]
