"""Modules that moved rooms keep their old import path for one release: the old name is the
new module (one object, so patches and isinstance agree, and its spec is its own) and importing
it warns with the new path."""

from __future__ import annotations

import importlib
import importlib.resources
import importlib.util
import sys

import pytest

from crdkit._moved import MOVED


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_the_old_path_is_the_new_module_and_warns(old: str, new: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        moved = importlib.import_module(old)
    module = importlib.import_module(new)
    assert moved is module
    assert module.__spec__ is not None
    assert module.__spec__.name == new  # the alias did not take the module's own spec


def test_no_old_path_is_also_a_file() -> None:
    for old in MOVED:
        sys.modules.pop(old, None)
        parent, _, leaf = old.rpartition(".")
        assert not (importlib.resources.files(parent) / f"{leaf}.py").is_file(), old


def test_the_old_deploy_cli_module_still_gives_gen_manifests() -> None:
    from crdkit.deploy.cli import gen_manifests
    from crdkit.deploy.cli.manifests import gen_manifests as home

    assert gen_manifests is home


def test_the_old_fake_and_faults_modules_are_their_packages() -> None:
    from crdkit.testing.fake import FakeCluster
    from crdkit.testing.faults import HttpFaultProxy, TcpFaultProxy

    assert FakeCluster.__module__ == "crdkit.testing.fake.cluster"
    assert {HttpFaultProxy.__module__, TcpFaultProxy.__module__} == {
        "crdkit.testing.faults.proxies"
    }
