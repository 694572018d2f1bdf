"""``FakeCluster``: an in-memory apiserver behind a real ``Client`` (through the client's
``ApiTransport``), for unit tests of reconcilers and schedulers that run in milliseconds.

It keeps resourceVersions, watches, field and label selectors, patches (JSON, merge, apply),
the status subresource, Bindings and the kinds it is given (``FakeKind``); what it does not
model it refuses with ``UnknownKind`` rather than guessing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crdkit._lazy import lazy_namespace

if TYPE_CHECKING:
    from crdkit.testing.fake.cluster import FakeCluster as FakeCluster
    from crdkit.testing.fake.kinds import BUILTIN_KINDS as BUILTIN_KINDS
    from crdkit.testing.fake.kinds import FakeKind as FakeKind
    from crdkit.testing.fake.kinds import KindRegistry as KindRegistry
    from crdkit.testing.fake.kinds import UnknownKind as UnknownKind
    from crdkit.testing.fake.server import FakeApiServer as FakeApiServer
    from crdkit.testing.fake.transport import FakeTransport as FakeTransport

__getattr__, __dir__ = lazy_namespace(__name__, globals())
