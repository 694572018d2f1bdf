"""``CrdkitError``: the one class every crdkit exception derives from, so ``except
crdkit.CrdkitError`` catches whatever crdkit raised and nothing else. Each room has one root
below it (``KubernetesError``, ``CrdError``, ``ControllerError``, ``WebhookError``,
``SchedulingError``, ``DeployError``, ``KitError``); exceptions that are also a kind of
``ValueError``, ``TimeoutError`` or ``LookupError`` keep those bases, so existing ``except
ValueError`` code goes on working. The placer raises plain ``ValueError`` and ``TypeError``: it
stands alone, for callers outside crdkit's runtime. The whole tree is drawn in
docs/reference/errors.md.
"""

from __future__ import annotations

__all__ = ["CrdkitError"]


class CrdkitError(Exception):
    """Raised by crdkit; see the module docstring for the tree below it."""
