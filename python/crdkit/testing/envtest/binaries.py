"""Finding the kube-apiserver and etcd binaries.

The search follows the envtest conventions so that binaries built by ``make envtest`` and binaries
downloaded by controller-runtime's ``setup-envtest`` both work: a flat folder holding
``kube-apiserver`` and ``etcd``.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from crdkit.testing.errors import BinariesNotFoundError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["Binaries", "candidate_folders", "find_binaries"]

ASSETS_ENV = "KUBEBUILDER_ASSETS"
REPO_BIN = Path(".envtest") / "bin"
_ROOT_MARKERS = ("pyproject.toml", ".git")
BUILD_HINT = "build them with `make envtest` (or `bash tools/envtest/build.sh`)"


@dataclass(frozen=True)
class Binaries:
    """Where the two programs of the control plane live."""

    kube_apiserver: Path
    etcd: Path

    @classmethod
    def in_folder(cls, folder: Path) -> Binaries | None:
        """The binaries in ``folder`` if both are there and executable, else None."""
        apiserver, etcd = folder / "kube-apiserver", folder / "etcd"
        if all(p.is_file() and os.access(p, os.X_OK) for p in (apiserver, etcd)):
            return cls(kube_apiserver=apiserver, etcd=etcd)
        return None


def _project_folders(start: Path) -> Iterable[Path]:
    """``start`` and its parents, up to the first that looks like a project root."""
    start = start.resolve()
    for folder in (start, *start.parents):
        yield folder
        if any((folder / marker).exists() for marker in _ROOT_MARKERS):
            return


def _setup_envtest_root(env: Mapping[str, str], home: Path) -> Path:
    # setup-envtest stores versions under the user's data folder, one sub-folder per release.
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "io.kubebuilder.envtest" / "k8s"
    data_home = env.get("XDG_DATA_HOME") or str(home / ".local" / "share")
    return Path(data_home) / "kubebuilder-envtest" / "k8s"


def _version_key(folder: Path) -> tuple[int, ...]:
    # Folders are named like "1.33.0-linux-amd64"; newest first wins.
    return tuple(int(n) for n in re.findall(r"\d+", folder.name.split("-", 1)[0]))


def candidate_folders(
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    home: Path | None = None,
    package_dir: Path | None = None,
) -> list[Path]:
    """Every folder searched for binaries, in the order they are tried.

    ``KUBEBUILDER_ASSETS`` first; then ``.envtest/bin`` in the current folder or a parent up
    to the project root, and in the clone the package was imported from (an editable install);
    then setup-envtest's default store, newest release first.
    """
    env = os.environ if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    home = Path.home() if home is None else home
    package_dir = Path(__file__).parent if package_dir is None else package_dir

    folders: list[Path] = []
    if assets := env.get(ASSETS_ENV):
        folders.append(Path(assets))
    folders.extend(folder / REPO_BIN for folder in _project_folders(cwd))
    package_root = list(_project_folders(package_dir))[-1]
    if (package_root / "tools" / "envtest").is_dir():
        folders.append(package_root / REPO_BIN)
    store = _setup_envtest_root(env, home)
    if store.is_dir():
        versions = [p for p in store.iterdir() if p.is_dir()]
        folders.extend(sorted(versions, key=_version_key, reverse=True))
    else:
        folders.append(store / "*")

    unique: list[Path] = []
    for folder in folders:
        if folder not in unique:
            unique.append(folder)
    return unique


def find_binaries(
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    home: Path | None = None,
    package_dir: Path | None = None,
) -> Binaries:
    """The first folder of :func:`candidate_folders` that holds both binaries.

    Raises :class:`BinariesNotFoundError` naming every folder it looked in.
    """
    folders = candidate_folders(env, cwd, home, package_dir)
    for folder in folders:
        if found := Binaries.in_folder(folder):
            return found
    looked = "\n".join(f"  {folder}" for folder in folders)
    raise BinariesNotFoundError(
        f"kube-apiserver and etcd were not found. Looked in:\n{looked}\n"
        f"From a crdkit clone, {BUILD_HINT}; otherwise point {ASSETS_ENV} at a folder "
        "holding both (for example one made by setup-envtest)."
    )
