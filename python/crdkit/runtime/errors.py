"""``ControllerError``: the root of what the controller runtime raises (a lost Lease, caches
that never synced, a bad reconciler option, an object already owned, a closed work queue) and
of ``TerminalError``, which reconcilers raise to say "do not retry"."""

from __future__ import annotations

from crdkit._errors import CrdkitError

__all__ = ["ControllerError"]


class ControllerError(CrdkitError):
    """Raised by the controller runtime."""
