"""``DeployError``: the root of what the generators raise (``RoleFileError``: a role file
``gen-rbac --check`` cannot read)."""

from __future__ import annotations

from crdkit._errors import CrdkitError

__all__ = ["DeployError"]


class DeployError(CrdkitError):
    """Raised by crdkit.deploy."""
