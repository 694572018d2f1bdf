"""The wheel checker `make wheels` runs: it must catch what a cross build can get wrong."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from tools.check_wheels import check_wheel, elf_machine, main, wheel_platform

X86 = "crdkit-0.1.0-cp311-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
ARM = "crdkit-0.1.0-cp311-abi3-manylinux2014_aarch64.manylinux_2_17_aarch64.whl"


def elf(machine: int) -> bytes:
    # ELF64 little-endian header up to e_machine (offset 18), enough for the checker
    return b"\x7fELF\x02\x01\x01" + bytes(11) + machine.to_bytes(2, "little") + bytes(44)


def wheel(folder: Path, name: str, files: dict[str, bytes]) -> Path:
    path = folder / name
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in files.items():
            archive.writestr(member, data)
    return path


def good(machine: int) -> dict[str, bytes]:
    return {
        "crdkit/__init__.py": b"",
        "crdkit/py.typed": b"",
        "crdkit/_placer.pyi": b"",
        "crdkit/_placer.abi3.so": elf(machine),
        "crdkit/deploy/scaffold/templates/Makefile.tmpl": b"",
    }


def test_elf_machine_and_wheel_tags() -> None:
    assert elf_machine(elf(62)) == "x86_64"
    assert elf_machine(elf(183)) == "aarch64"
    assert elf_machine(b"MZ not elf") is None
    assert wheel_platform(ARM) == ("cp311", "abi3", "aarch64")


def test_good_wheels_pass(tmp_path: Path) -> None:
    wheel(tmp_path, X86, good(62))
    wheel(tmp_path, ARM, good(183))
    assert main([str(tmp_path), "--expect", "x86_64", "--expect", "aarch64"]) == 0


@pytest.mark.parametrize(
    ("name", "files", "problem"),
    [
        (ARM, good(62), "is built for x86_64, not aarch64"),
        (X86, {**good(62), "crdkit/extra.so": elf(62)}, "not one _placer.abi3.so"),
        (X86, {k: v for k, v in good(62).items() if k != "crdkit/py.typed"}, "py.typed"),
        (
            X86,
            {k: v for k, v in good(62).items() if not k.endswith(".tmpl")},
            "templates/Makefile.tmpl is missing",
        ),
        (X86.replace("abi3", "cp311"), good(62), "not cp311-abi3"),
        (X86, {**good(62), "tests/test_x.py": b""}, "carries ['tests/test_x.py']"),
    ],
)
def test_what_a_cross_build_gets_wrong_is_named(
    tmp_path: Path, name: str, files: dict[str, bytes], problem: str
) -> None:
    _, problems = check_wheel(wheel(tmp_path, name, files))
    assert any(problem in p for p in problems), problems


def test_a_missing_architecture_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wheel(tmp_path, X86, good(62))
    assert main([str(tmp_path), "--expect", "x86_64", "--expect", "aarch64"]) == 1
    assert "no wheel for aarch64" in capsys.readouterr().err
