import sys
import types
from collections.abc import Iterator

import pytest

from crdkit.crd import TargetError
from crdkit.crd.discover import find_resources
from crdkit.resources import CustomResource


@pytest.fixture
def module() -> Iterator[types.ModuleType]:
    """A module holding an abstract base, two versions of a kind and an imported class."""
    mod = types.ModuleType("discover_fixture")

    class Base(CustomResource, scope="Cluster"):
        pass

    class Thing(Base, group="d.example.com", version="v1", storage=True):
        pass

    class ThingV2(Thing, version="v2"):
        pass

    mod.Base = Base  # type: ignore[attr-defined]
    mod.Thing = Thing  # type: ignore[attr-defined]
    mod.ThingV2 = ThingV2  # type: ignore[attr-defined]
    mod.CustomResource = CustomResource  # type: ignore[attr-defined]
    mod.Alias = Thing  # type: ignore[attr-defined]
    sys.modules[mod.__name__] = mod
    yield mod
    del sys.modules[mod.__name__]


def test_a_module_gives_every_concrete_class_once(module: types.ModuleType) -> None:
    assert find_resources(["discover_fixture"]) == [module.Thing, module.ThingV2]


def test_a_class_target_and_duplicates(module: types.ModuleType) -> None:
    found = find_resources(["discover_fixture:ThingV2", "discover_fixture"])
    assert found == [module.ThingV2, module.Thing]


def test_an_abstract_class_named_directly_is_returned_for_assembly_to_refuse(
    module: types.ModuleType,
) -> None:
    assert find_resources(["discover_fixture:Base"]) == [module.Base]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (":Thing", "names no module"),
        ("discover_fixture:Nope", "has no attribute 'Nope'"),
        ("discover_fixture:CustomResource", "is not a CustomResource subclass"),
        ("no_such_module_anywhere", "cannot import module"),
    ],
)
def test_bad_targets(module: types.ModuleType, target: str, message: str) -> None:
    with pytest.raises(TargetError, match=message):
        find_resources([target])


def test_no_targets() -> None:
    with pytest.raises(TargetError, match="no TARGET given"):
        find_resources([])
