"""Where a Python process's CPU went, by kind of work, from a py-spy profile.

``py-spy record --format raw`` writes one line per distinct stack: the frames from the outermost
to the innermost, separated by ``;``, then a space and the number of samples. Each stack is
charged to one kind (`KINDS`): to ``imports`` if any frame is the import machinery (start-up),
else to the kind of its innermost frame that has one, so ``json.loads`` called by the client's
codec is JSON and an ``ssl`` read under the event loop is HTTP/TLS. Frames of none of the listed
kinds (the standard library's ``enum``, ``typing``...) defer to their callers; a stack with no
frame of a listed kind is ``other``.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

# Checked in this order for each frame: the first kind whose fragments appear in the frame wins.
KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("user code", ("runtime_bench_operators.py",)),
    ("pydantic", ("pydantic/", "pydantic_core/")),
    ("json", ("json/", "msgspec/", "crdkit/client/codec.py")),
    (
        "http/tls",
        (
            "aiohttp/",
            "aiohappyeyeballs/",
            "yarl/",
            "multidict/",
            "ssl.py",
            "asyncio/sslproto.py",
            "http/",
            "crdkit/client/transport.py",
            "crdkit/client/watch.py",
            "crdkit/client/auth.py",
        ),
    ),
    (
        "queue/store",
        (
            "crdkit/runtime/queue.py",
            "crdkit/runtime/ratelimit.py",
            "crdkit/runtime/store.py",
            "crdkit/runtime/cache.py",
            "crdkit/runtime/informer.py",
            "crdkit/runtime/informer_handlers.py",
            "crdkit/runtime/watch.py",
        ),
    ),
    ("crdkit (other)", ("crdkit/",)),
    ("event loop", ("asyncio/", "selectors.py", "uvloop/")),
    ("logging", ("logging/",)),
)
IMPORTS = "imports"
OTHER = "other"
IMPORT_FRAMES = ("<frozen importlib", "importlib/")


def kind_of(frames: list[str]) -> str:
    """The kind one stack (frames outermost first) is charged to."""
    if any(marker in frame for frame in frames for marker in IMPORT_FRAMES):
        return IMPORTS
    for frame in reversed(frames):
        for kind, fragments in KINDS:
            if any(fragment in frame for fragment in fragments):
                return kind
    return OTHER


def split(lines: Iterable[str]) -> dict[str, float]:
    """Percent of samples per kind (rounded to 0.1), largest first; kinds with none left out."""
    samples: dict[str, int] = {}
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            continue  # py-spy's blank or partial lines
        kind = kind_of(stack.split(";"))
        samples[kind] = samples.get(kind, 0) + int(count)
    total = sum(samples.values())
    if not total:
        return {}
    ordered = sorted(samples.items(), key=lambda item: (-item[1], item[0]))
    return {kind: round(100 * count / total, 1) for kind, count in ordered}


def read_lines(path: Path) -> list[str]:
    """The profile's lines; none when py-spy wrote no file (it had no sample to write)."""
    return path.read_text().splitlines() if path.exists() else []


def total_samples(lines: Iterable[str]) -> int:
    total = 0
    for line in lines:
        count = line.rstrip("\n").rpartition(" ")[2]
        total += int(count) if count.isdigit() else 0
    return total


def py_spy() -> str:
    """The py-spy executable beside this interpreter or on PATH; SystemExit naming the fix."""
    import sys

    beside = Path(sys.executable).parent / "py-spy"
    found = str(beside) if beside.exists() else shutil.which("py-spy")
    if found is None:
        raise SystemExit(
            "--profile needs py-spy: pip install -e '.[bench]' (or pip install py-spy)"
        )
    return found


def record(
    pid: int, output: Path, rate: int = 100, *, native: bool = False
) -> subprocess.Popen[bytes]:
    """Start sampling process ``pid`` (CPU only: idle threads are left out) into ``output``;
    send the returned process SIGINT to stop it and write the file. ``native``: C and Rust
    frames too (the garbage collector's, the placer's), which py-spy reads only by stopping the
    process at each sample, so it runs slower."""
    how = "--native" if native else "--nonblocking"
    return subprocess.Popen(
        [
            *(py_spy(), "record", "--pid", str(pid), "--format", "raw", "-r", str(rate)),
            *(how, "-o", str(output)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
