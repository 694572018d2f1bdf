"""Check the wheels `make wheels` built before anyone publishes them.

A cross-compiled wheel cannot be imported on the machine that built it, so what can go wrong
is checked from the outside: each wheel is abi3 for CPython 3.11+, carries exactly one
extension module, and that module's ELF header names the machine its platform tag promises
(an x86_64 library inside an aarch64 wheel would install and then fail to import). The typing
files and the project templates of `crdkit init` must be there too. Prints one JSON line per
wheel; exits 1 naming every problem.

    python tools/check_wheels.py dist/wheels [--expect x86_64 --expect aarch64]
"""

from __future__ import annotations

import argparse
import json
import sys
import zipfile
from pathlib import Path

# ELF e_machine values (the System V ABI's registry) for the platforms crdkit ships.
ELF_MACHINES = {62: "x86_64", 183: "aarch64"}
# The typing files, and a template of `crdkit init`: package data that is no Python module.
REQUIRED_FILES = (
    "crdkit/py.typed",
    "crdkit/_placer.pyi",
    "crdkit/__init__.py",
    "crdkit/deploy/scaffold/templates/Makefile.tmpl",
)


def elf_machine(data: bytes) -> str | None:
    """The architecture an ELF shared object was built for, or ``None`` if it is not ELF."""
    if len(data) < 20 or data[:4] != b"\x7fELF":
        return None
    # EI_DATA (byte 5) says the byte order of every later field
    machine = int.from_bytes(data[18:20], "little" if data[5] == 1 else "big")
    return ELF_MACHINES.get(machine, f"e_machine {machine}")


def wheel_platform(name: str) -> tuple[str, str, str]:
    """(python tag, abi tag, architecture) from a wheel's file name."""
    parts = name.removesuffix(".whl").split("-")
    if len(parts) < 5:
        raise ValueError(f"{name}: not a wheel file name")
    python, abi, platform = parts[-3:]
    arch = next((a for a in ELF_MACHINES.values() if platform.endswith(a)), platform)
    return python, abi, arch


def check_wheel(path: Path) -> tuple[dict[str, object], list[str]]:
    problems: list[str] = []
    python, abi, arch = wheel_platform(path.name)
    if abi != "abi3" or python != "cp311":
        problems.append(f"{path.name}: tagged {python}-{abi}, not cp311-abi3")
    with zipfile.ZipFile(path) as wheel:
        names = wheel.namelist()
        modules = [n for n in names if n.endswith(".so") or n.endswith(".pyd")]
        if modules != ["crdkit/_placer.abi3.so"]:
            problems.append(f"{path.name}: extension modules {modules}, not one _placer.abi3.so")
        machines = {m: elf_machine(wheel.read(m)) for m in modules}
        for module, machine in machines.items():
            if machine != arch:
                problems.append(f"{path.name}: {module} is built for {machine}, not {arch}")
        for required in REQUIRED_FILES:
            if required not in names:
                problems.append(f"{path.name}: {required} is missing")
        strays = [n for n in names if n.startswith(("tests/", "examples/", "benches/"))]
        if strays:
            problems.append(f"{path.name}: carries {strays[:3]}")
    summary: dict[str, object] = {
        "wheel": path.name,
        "arch": arch,
        "modules": machines,
        "bytes": path.stat().st_size,
    }
    return summary, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--expect", action="append", default=[], help="an architecture")
    args = parser.parse_args(argv)
    wheels = sorted(args.folder.glob("*.whl"))
    problems: list[str] = []
    found = set()
    for path in wheels:
        summary, wrong = check_wheel(path)
        found.add(summary["arch"])
        problems += wrong
        print(json.dumps(summary))
    for arch in args.expect:
        if arch not in found:
            problems.append(f"no wheel for {arch} in {args.folder}")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
