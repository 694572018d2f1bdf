"""Binary discovery: search order and the error that says where it looked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crdkit.testing import Binaries, BinariesNotFoundError, candidate_folders
from crdkit.testing import find_binaries as _find_binaries


def find_binaries(*, env: dict[str, str], cwd: Path, home: Path) -> Binaries:
    # Keep the clone these tests run from (which may hold real binaries) out of the search.
    return _find_binaries(env=env, cwd=cwd, home=home, package_dir=home / "site-packages")


def _install(folder: Path) -> Binaries:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("kube-apiserver", "etcd"):
        path = folder / name
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
    return Binaries(kube_apiserver=folder / "kube-apiserver", etcd=folder / "etcd")


def test_kubebuilder_assets_comes_first(tmp_path: Path) -> None:
    assets = _install(tmp_path / "assets")
    _install(tmp_path / "project" / ".envtest" / "bin")
    found = find_binaries(
        env={"KUBEBUILDER_ASSETS": str(tmp_path / "assets")},
        cwd=tmp_path / "project",
        home=tmp_path / "home",
    )
    assert found == assets


def test_envtest_bin_found_from_a_subfolder_of_the_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "pyproject.toml").parent.mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    expected = _install(project / ".envtest" / "bin")
    (project / "tests" / "deep").mkdir(parents=True)
    found = find_binaries(env={}, cwd=project / "tests" / "deep", home=tmp_path / "home")
    assert found.kube_apiserver.resolve() == expected.kube_apiserver.resolve()


def test_setup_envtest_store_newest_release_wins(tmp_path: Path) -> None:
    store = tmp_path / "home" / ".local" / "share" / "kubebuilder-envtest" / "k8s"
    _install(store / "1.9.0-linux-amd64")
    newest = _install(store / "1.33.0-linux-amd64")
    _install(store / "1.30.2-linux-amd64")
    found = find_binaries(env={}, cwd=tmp_path, home=tmp_path / "home")
    assert found == newest


def test_xdg_data_home_moves_the_setup_envtest_store(tmp_path: Path) -> None:
    expected = _install(tmp_path / "data" / "kubebuilder-envtest" / "k8s" / "1.34.1-linux-amd64")
    found = find_binaries(
        env={"XDG_DATA_HOME": str(tmp_path / "data")}, cwd=tmp_path, home=tmp_path / "home"
    )
    assert found == expected


def test_a_folder_with_only_one_binary_is_skipped(tmp_path: Path) -> None:
    half = tmp_path / "half"
    half.mkdir()
    (half / "etcd").write_text("")
    (half / "etcd").chmod(0o755)
    assert Binaries.in_folder(half) is None


def test_not_executable_is_not_found(tmp_path: Path) -> None:
    folder = tmp_path / "bin"
    _install(folder)
    os.chmod(folder / "etcd", 0o644)
    assert Binaries.in_folder(folder) is None


def test_error_lists_every_folder_and_how_to_build(tmp_path: Path) -> None:
    env = {"KUBEBUILDER_ASSETS": str(tmp_path / "assets")}
    with pytest.raises(BinariesNotFoundError) as caught:
        _find_binaries(
            env=env, cwd=tmp_path / "here", home=tmp_path / "home", package_dir=tmp_path / "pkg"
        )
    message = str(caught.value)
    folders = candidate_folders(env, tmp_path / "here", tmp_path / "home", tmp_path / "pkg")
    assert folders[0] == tmp_path / "assets"
    for folder in folders:
        assert str(folder) in message
    assert str(tmp_path / "assets") in message
    assert "kubebuilder-envtest" in message
    assert "make envtest" in message
    assert "KUBEBUILDER_ASSETS" in message
