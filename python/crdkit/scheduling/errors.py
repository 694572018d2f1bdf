"""``SchedulingError``: the root of what gang scheduling raises (``BindError``: a bind the
apiserver refused, after the gang's bound pods were rolled back)."""

from __future__ import annotations

from crdkit._errors import CrdkitError

__all__ = ["SchedulingError"]


class SchedulingError(CrdkitError):
    """Raised by crdkit.scheduling."""
