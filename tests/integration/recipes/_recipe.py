"""What the recipe tests share: reading a guide's commands and manifests (so a test runs what
the page says), building a peer from the Go module proxy with its ``tools/*/build.sh``, and
running a program as a process that is always stopped."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from crdkit.client import Client, GroupVersionKind, NotFound
from crdkit.testing.envtest.crds import crd_is_established

ROOT = Path(__file__).resolve().parents[3]
RECIPES = ROOT / "docs" / "guides" / "recipes"
CRD = GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
QUIET_SCHEDULER = (
    "--metrics-bind-address",
    "0",
    "--health-probe-bind-address",
    "0",
    "--log-format",
    "text",
)
"""What a test adds to a guide's ``crdkit scheduler`` command: no ports a parallel run could
hold, and a log to read."""


def shell_commands(text: str) -> list[list[str]]:
    """Every command of the ```bash blocks of ``text`` (continuation lines joined), each
    split as the shell would."""
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    return [
        shlex.split(line, comments=True)
        for block in blocks
        for line in block.replace("\\\n", " ").splitlines()
        if line.strip()
    ]


def section_commands(guide: Path, section: str | None = None) -> list[list[str]]:
    """The commands of ``guide``, or of its ``section`` (from that heading to the next)."""
    text = guide.read_text()
    if section is not None:
        start = text.index(section)
        end = text.find("\n## ", start + 1)
        text = text[start : end if end >= 0 else len(text)]
    return shell_commands(text)


def guide_command(guide: Path, program: str, *, section: str | None = None) -> list[str]:
    """The arguments of the one command of ``guide`` (or of its ``section``) that runs
    ``program``: ``crdkit scheduler``, ``python -m ...``, or a binary by its name."""
    words = program.split()
    commands = section_commands(guide, section)
    if len(words) > 1:
        found = [c[len(words) :] for c in commands if c[: len(words)] == words]
    else:
        found = [c[1:] for c in commands if c and Path(c[0]).name == program]
    where = guide.name if section is None else f"{guide.name}, {section}"
    assert len(found) == 1, f"{where}: runs {program} {len(found)} times, expected once"
    return found[0]


def manifests(path: Path) -> list[dict[str, Any]]:
    """The documents of a guide's YAML file."""
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def go_binary() -> str:
    # The same search as tools/go-toolchain.sh, so the module lookup uses the build's Go.
    found = os.environ.get("GO") or shutil.which("go")
    if found:
        return found
    if Path("/usr/local/go/bin/go").exists():
        return "/usr/local/go/bin/go"
    pytest.fail("no Go toolchain (GO, go on PATH or /usr/local/go): cannot build the peer")


def build(script: Path) -> str:
    """The binary ``script`` (a ``tools/*/build.sh``) builds, or finds up to date in the cache:
    its path, the script's last line."""
    go_binary()
    built = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=1500)
    if built.returncode != 0:
        pytest.fail(f"{script.relative_to(ROOT)} failed (exit {built.returncode}):\n{built.stderr}")
    return built.stdout.strip().splitlines()[-1]


def module_dir(module: str, pinned_by: Path) -> Path:
    """``module``'s folder in Go's module cache, at the version ``pinned_by`` (a build's
    folder, with its go.mod) pins: where the peer's own CRDs are."""
    found = subprocess.run(
        [go_binary(), "mod", "download", "-json", module],
        cwd=pinned_by,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"},
    )
    assert found.returncode == 0, found.stderr
    return Path(json.loads(found.stdout)["Dir"])


@contextlib.asynccontextmanager
async def process(log: Path, *argv: str, env: dict[str, str]) -> AsyncIterator[Any]:
    """``argv`` as a process writing to ``log``; on the way out, even after a failure, SIGTERM
    and then SIGKILL if it has not ended within 30 s."""
    with log.open("wb") as out:
        child = await asyncio.create_subprocess_exec(
            *argv, stdout=out, stderr=out, stdin=asyncio.subprocess.DEVNULL, env=env
        )
        try:
            yield child
        finally:
            if child.returncode is None:
                child.send_signal(signal.SIGTERM)
                try:
                    await asyncio.wait_for(child.wait(), 30)
                except TimeoutError:
                    child.kill()
                    await child.wait()


def tail(log: Path, lines: int = 40) -> str:
    """The end of a process's log, for a failure's message."""
    text = log.read_text(errors="replace").splitlines() if log.exists() else []
    return f"--- {log.name} (last {lines} lines):\n" + "\n".join(text[-lines:])


def scheduler_argv(crdkit: str, args: Sequence[str], kubeconfig: str) -> list[str]:
    """A guide's ``crdkit scheduler`` arguments as a test runs them (`QUIET_SCHEDULER`)."""
    return [crdkit, "scheduler", *args, "--kubeconfig", kubeconfig, *QUIET_SCHEDULER]


async def podgroup_crd_established(client: Client) -> bool:
    """Whether scheduler-plugins' PodGroup CRD (which ``crdkit scheduler --install-crds``
    creates) is served yet."""
    try:
        crd = await client.get(CRD, "podgroups.scheduling.x-k8s.io")
    except NotFound:
        return False
    return crd_is_established(crd)
