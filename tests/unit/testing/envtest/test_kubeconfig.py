"""The kubeconfig: embedded certificates, one context, owner-only, never through a link."""

from __future__ import annotations

import base64
import errno
import os
import stat
from pathlib import Path

import pytest
import yaml

from crdkit.testing.envtest.certs import generate_pki
from crdkit.testing.envtest.kubeconfig import write_kubeconfig, write_private


def test_kubeconfig_embeds_the_admin_identity(tmp_path: Path) -> None:
    pki = generate_pki(tmp_path / "pki")
    path = write_kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:6443", pki)
    config = yaml.safe_load(path.read_text())
    assert config["current-context"] == "envtest"
    cluster = config["clusters"][0]["cluster"]
    assert cluster["server"] == "https://127.0.0.1:6443"
    assert base64.b64decode(cluster["certificate-authority-data"]) == pki.ca_cert.read_bytes()
    user = config["users"][0]["user"]
    assert base64.b64decode(user["client-certificate-data"]) == pki.client_cert.read_bytes()
    assert base64.b64decode(user["client-key-data"]) == pki.client_key.read_bytes()
    assert path.stat().st_mode & 0o077 == 0


def test_write_private_refuses_a_symlink_and_leaves_its_target_alone(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_text("keep")
    (tmp_path / "link").symlink_to(target)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for name in ("link", "dangling"):
        with pytest.raises(OSError, match="symbolic link") as refused:
            write_private(tmp_path / name, b"admin key")
        assert refused.value.errno == errno.ELOOP
    assert target.read_text() == "keep"
    assert not (tmp_path / "nowhere").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "link", "target"]


def test_write_private_replaces_the_file_rather_than_writing_into_it(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text("old")
    path.chmod(0o644)
    # A hard link shares the inode: writing in place would hand it the admin key.
    os.link(path, tmp_path / "other-name")
    old_umask = os.umask(0)  # the mode must not depend on the caller's umask
    try:
        write_private(path, b"admin key")
    finally:
        os.umask(old_umask)
    assert path.read_bytes() == b"admin key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert (tmp_path / "other-name").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kubeconfig", "other-name"]


def test_write_private_refuses_a_symlink_put_there_while_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, target = tmp_path / "kubeconfig", tmp_path / "target"
    target.write_text("keep")
    real_fsync = os.fsync

    def fsync_then_swap(fd: int) -> None:
        real_fsync(fd)
        if not path.is_symlink():
            path.symlink_to(target)

    monkeypatch.setattr(os, "fsync", fsync_then_swap)
    with pytest.raises(OSError, match="symbolic link") as refused:
        write_private(path, b"admin key")
    assert refused.value.errno == errno.ELOOP
    assert target.read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kubeconfig", "target"]


def test_write_private_into_a_missing_folder_fails_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_private(tmp_path / "missing" / "kubeconfig", b"admin key")
    assert list(tmp_path.iterdir()) == []
