"""What a command loads before it does its work: modules imported and the time the imports
take, for the commands and imports whose cost the package layout decides.

    python benches/import_footprint.py [--repeat 5] [--source DIR]

Each case runs in a fresh interpreter (``-X importtime`` for the time, ``sys.modules`` for the
count), ``--repeat`` times; the JSON on stdout gives the median per case. Each also runs as
often without ``-X importtime``, timed from spawn to exit (``wall_seconds_median``), beside
an interpreter that does nothing (``python -c pass``, ``bare_seconds_median``): what a call
costs a script that runs it in a loop is ``over_bare_seconds_median``. ``--source`` points
at another checkout's ``python/`` folder (with the extension built into it or copied there), to
measure a layout before and after a change on the same machine.

Cases:

- ``gen-rbac``: ``crdkit gen-rbac`` on the hello example's reconciler (a generator: it should
  load no HTTP stack);
- ``place``: ``crdkit place`` on a one-node cluster and a one-pod gang (the placer stands alone);
- ``place, models' path``: the same gang with ``replicas`` written ``"1"``, a coercion the plain
  reader leaves to the contract's pydantic models: what `crdkit.placer.plain` saves a plainly
  valid document;
- ``import crdkit.testing``: the test kit's root, before any name of it is used.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("aiohttp", "prometheus_client", "kubernetes_asyncio", "pydantic", "yaml")
ROOT = Path(__file__).resolve().parent.parent

_PROBE = """
import json, sys
{statement}
heavy = {heavy!r}
print(json.dumps({{
    "modules": len(sys.modules),
    "crdkit_modules": sum(1 for m in sys.modules if m == "crdkit" or m.startswith("crdkit.")),
    "heavy": sorted(h for h in heavy if h in sys.modules),
}}))
"""


def _cases(scratch: Path) -> dict[str, str]:
    cluster = scratch / "cluster.json"
    gang = scratch / "gang.json"
    cluster.write_text(
        json.dumps({"levels": [], "nodes": [{"name": "n1", "allocatable": {"cpu": "8"}}]})
    )
    gang.write_text(
        json.dumps({"name": "g", "tasks": [{"name": "t", "replicas": 1, "requests": {"cpu": "1"}}]})
    )
    coerced = scratch / "coerced.json"
    coerced.write_text(
        json.dumps(
            {"name": "g", "tasks": [{"name": "t", "replicas": "1", "requests": {"cpu": "1"}}]}
        )
    )
    command = (
        "import contextlib, io\n"
        "from crdkit.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main({args!r}, standalone_mode=False)\n"
    )
    return {
        "gen-rbac": command.format(
            args=[
                "gen-rbac",
                "examples.hello.operator:HelloReconciler",
                "--service-account",
                "hello",
                "--service-account-namespace",
                "ops",
            ]
        ),
        "place": command.format(args=["place", "--cluster", str(cluster), "--gang", str(gang)]),
        "place, models' path": command.format(
            args=["place", "--cluster", str(cluster), "--gang", str(coerced)]
        ),
        "import crdkit.testing": "import crdkit.testing\n",
    }


def _import_seconds(stderr: str) -> float:
    """The sum of ``-X importtime``'s cumulative column over the top-level imports (a nested
    import's name is indented below its importer's, and counted in its cumulative time)."""
    total = 0
    for line in stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        fields = line.removeprefix("import time:").split("|")
        if len(fields) != 3 or not fields[1].strip().isdigit():
            continue  # the header
        name = fields[2]
        if name.startswith(" ") and not name.startswith("   "):
            total += int(fields[1])
    return total / 1e6


def _env(source: Path) -> dict[str, str]:
    """The environment of a measured interpreter: crdkit from ``source``, warnings off."""
    return {**os.environ, "PYTHONPATH": f"{source}{os.pathsep}{ROOT}", "PYTHONWARNINGS": "ignore"}


def _run(statement: str, source: Path) -> dict[str, object]:
    probe = _PROBE.format(statement=statement, heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=_env(source),
        timeout=120,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    result["import_seconds"] = _import_seconds(done.stderr)
    return result


def _wall_seconds(statement: str, source: Path) -> float:
    """Spawn to exit of ``statement`` in a fresh interpreter, without ``-X importtime``."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", statement],
        capture_output=True,
        check=True,
        cwd=ROOT,
        env=_env(source),
        timeout=120,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--source", type=Path, default=ROOT / "python")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        report: dict[str, object] = {}
        bare = statistics.median(
            _wall_seconds("pass", options.source) for _ in range(options.repeat)
        )
        for name, statement in _cases(Path(scratch)).items():
            runs = [_run(statement, options.source) for _ in range(options.repeat)]
            wall = statistics.median(
                _wall_seconds(statement, options.source) for _ in range(options.repeat)
            )
            report[name] = {
                "modules": runs[0]["modules"],
                "crdkit_modules": runs[0]["crdkit_modules"],
                "heavy": runs[0]["heavy"],
                "import_seconds_median": round(
                    statistics.median(float(str(r["import_seconds"])) for r in runs), 4
                ),
                "wall_seconds_median": round(wall, 4),
                "over_bare_seconds_median": round(wall - bare, 4),
            }
    print(
        json.dumps(
            {
                "source": str(options.source),
                "repeat": options.repeat,
                "bare_seconds_median": round(bare, 4),
                "cases": report,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
