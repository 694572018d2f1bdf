"""Old import paths of modules that moved to another room, kept working for one release.

``MOVED`` is the whole list. A finder on ``sys.meta_path`` (installed when :mod:`crdkit` is
imported, which any ``crdkit.*`` import does first) answers an old name with the new module
itself: ``sys.modules`` then holds one object under both names, so classes, globals and what a
test patches stay one. The import warns once with a :class:`DeprecationWarning` that names the
new path. No file is left behind at the old place.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.abc import Loader as _LoaderBase
    from types import ModuleType
else:
    _LoaderBase = object

__all__ = ["MOVED", "install"]

MOVED = {
    # the webhook room
    "crdkit.runtime.admission": "crdkit.webhook.admission",
    "crdkit.runtime.conversion": "crdkit.webhook.conversion",
    "crdkit.runtime.jsonpatch": "crdkit.webhook.jsonpatch",
    "crdkit.runtime.webhook_server": "crdkit.webhook.server",
    "crdkit.runtime.webhook_runner": "crdkit.webhook.runner",
    "crdkit.runtime.webhook_config": "crdkit.webhook.configuration",
    "crdkit.runtime.webhook_certs": "crdkit.webhook.certs",
    # the deploy room
    "crdkit.runtime.rbac": "crdkit.deploy.rbac",
    "crdkit.runtime.rbac_check": "crdkit.deploy.role_check",
    "crdkit.runtime.rbac_cli": "crdkit.deploy.cli.rbac",
    "crdkit.runtime.webhook_cli": "crdkit.deploy.cli.webhooks",
    "crdkit.runtime.cli_output": "crdkit.deploy.cli.output",
    # the test kit
    "crdkit.runtime.operator_runner": "crdkit.testing.operator",
    "crdkit.runtime.testing": "crdkit.testing.reconcile",
    "crdkit.runtime.fixtures": "crdkit.testing.fixtures",
    "crdkit.runtime.pytest_plugin": "crdkit.testing.pytest_plugin",
    "crdkit.client.fixtures": "crdkit.testing.fixtures",
    "crdkit.testing.fake_defaults": "crdkit.testing.fake.defaults",
    "crdkit.testing.fake_errors": "crdkit.testing.fake.errors",
    "crdkit.testing.fake_kinds": "crdkit.testing.fake.kinds",
    "crdkit.testing.fake_patch": "crdkit.testing.fake.patch",
    "crdkit.testing.fake_select": "crdkit.testing.fake.select",
    "crdkit.testing.fake_server": "crdkit.testing.fake.server",
    "crdkit.testing.fake_transport": "crdkit.testing.fake.transport",
    "crdkit.testing.binaries": "crdkit.testing.envtest.binaries",
    "crdkit.testing.control_plane": "crdkit.testing.envtest.control_plane",
    "crdkit.testing.certs": "crdkit.testing.envtest.certs",
    "crdkit.testing.kubeconfig": "crdkit.testing.envtest.kubeconfig",
    "crdkit.testing.processes": "crdkit.testing.envtest.processes",
    "crdkit.testing.supervisor": "crdkit.testing.envtest.supervisor",
    "crdkit.testing.crds": "crdkit.testing.envtest.crds",
    "crdkit.testing.users": "crdkit.testing.envtest.users",
    "crdkit.testing.cli": "crdkit.testing.envtest.cli",
    "crdkit.testing.kubelet": "crdkit.testing.sim.kubelet",
    "crdkit.testing.nodes": "crdkit.testing.sim.nodes",
    "crdkit.testing.virtual_time": "crdkit.testing.sim.virtual_time",
}
"""Old module path -> where it lives now."""


# The finder and the loader are duck-typed, as the import system takes them: importing
# `importlib.abc` for their base classes would cost every crdkit command `importlib.resources`
# and `tempfile` (a tenth of `crdkit place`).


class _MovedLoader(_LoaderBase):
    """Loads an old name as the module at its new path."""

    def __init__(self, old: str, new: str) -> None:
        self.old = old
        self.new = new
        self._spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system set the alias's spec on the module it was given; the module's own
        # spec (its real name and file) is put back, so reloads and tracebacks stay right.
        module.__spec__ = self._spec
        warnings.warn(
            f"{self.old} moved to {self.new}; import it from there (the old path goes in the "
            "next release)",
            DeprecationWarning,
            stacklevel=2,
        )


class _MovedFinder:
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _MovedLoader(fullname, new))


_FINDER = _MovedFinder()


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once), so old names never reach a file."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
