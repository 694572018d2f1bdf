"""Every exception crdkit raises derives from ``crdkit.CrdkitError``, through one root per room,
and keeps the built-in base callers already catch it by (``ValueError`` and the like)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import crdkit
from crdkit import CrdkitError
from crdkit.client import KubernetesError
from crdkit.crd.errors import CrdError
from crdkit.deploy import DeployError
from crdkit.runtime import ControllerError
from crdkit.scheduling import SchedulingError
from crdkit.testing import KitError
from crdkit.webhook import WebhookError

ROOTS = {
    "client": KubernetesError,
    "crd": CrdError,
    "runtime": ControllerError,
    "webhook": WebhookError,
    "scheduling": SchedulingError,
    "deploy": DeployError,
    "testing": KitError,
}
# Stands alone for callers outside crdkit: plain ValueError/TypeError, no crdkit root.
ALONE = {"placer", "resources"}


def _public_exceptions() -> list[type[BaseException]]:
    found = []
    for info in pkgutil.walk_packages(crdkit.__path__, "crdkit."):
        if info.name.endswith(("pytest_plugin", "fixtures")):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and not name.startswith("_")
            ):
                found.append(value)
    return found


@pytest.mark.parametrize("error", _public_exceptions(), ids=lambda e: e.__qualname__)
def test_each_exception_is_under_its_rooms_root(error: type[BaseException]) -> None:
    room = error.__module__.split(".")[1]
    if room.startswith("_"):
        assert issubclass(error, CrdkitError)
        return
    assert room not in ALONE, f"{error.__qualname__}: the {room} room raises built-ins only"
    assert issubclass(error, ROOTS[room]), f"{error.__qualname__} is not a {ROOTS[room]}"


def test_every_root_is_a_crdkit_error() -> None:
    for root in ROOTS.values():
        assert issubclass(root, CrdkitError)


def test_the_built_in_bases_are_kept() -> None:
    from crdkit.client.selectors import SelectorError
    from crdkit.runtime.manager import CacheSyncTimeout
    from crdkit.runtime.options import OptionError
    from crdkit.testing import UnknownKind
    from crdkit.webhook import ConversionError

    assert issubclass(CrdError, ValueError)
    assert issubclass(OptionError, ValueError)
    assert issubclass(SelectorError, ValueError)
    assert issubclass(ConversionError, ValueError)
    assert issubclass(CacheSyncTimeout, TimeoutError)
    assert issubclass(UnknownKind, LookupError)
