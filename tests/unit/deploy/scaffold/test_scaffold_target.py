"""crdkit.deploy.scaffold.target: a new project goes into a missing or empty folder; a folder
with anything in it only with force, and then every overwritten file is reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from crdkit.deploy.scaffold.names import ScaffoldError
from crdkit.deploy.scaffold.target import check_target, write_files


def test_a_missing_or_empty_folder_is_taken(tmp_path: Path) -> None:
    check_target(tmp_path / "new", force=False)
    check_target(tmp_path, force=False)


def test_a_folder_with_entries_is_refused_naming_some(tmp_path: Path) -> None:
    for name in ("a", "b", "c", "d"):
        (tmp_path / name).write_text("")
    with pytest.raises(ScaffoldError, match=r"is not empty \(a, b, c, \.\.\.\).*--force") as raised:
        check_target(tmp_path, force=False)
    assert raised.value.flag == "DIRECTORY"


def test_a_hidden_file_makes_a_folder_not_empty(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    with pytest.raises(ScaffoldError, match=r"\(\.git\)"):
        check_target(tmp_path, force=False)


def test_force_takes_a_folder_with_entries(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    check_target(tmp_path, force=True)


def test_a_file_is_no_target_even_with_force(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(ScaffoldError, match="is not a folder"):
        check_target(tmp_path / "f", force=True)


def test_write_files_makes_folders_and_reports_what_it_overwrote(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("old")
    written = write_files(tmp_path, {"Makefile": "new", "pkg/models.py": "x = 1\n"})
    assert written == [(tmp_path / "Makefile", True), (tmp_path / "pkg" / "models.py", False)]
    assert (tmp_path / "Makefile").read_text() == "new"
    assert (tmp_path / "pkg" / "models.py").read_text() == "x = 1\n"


def test_a_folder_where_a_file_goes_is_refused(tmp_path: Path) -> None:
    (tmp_path / "Makefile").mkdir()
    with pytest.raises(ScaffoldError, match="is a folder where the project has a file"):
        write_files(tmp_path, {"Makefile": "x"})
