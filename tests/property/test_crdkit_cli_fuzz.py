"""Fuzz: every ``crdkit`` command, on thousands of mutated inputs, ends in a result (exit 0) or
a clean refusal (exit 2), never a traceback (issue 15).

Valid inputs are mutated (structure: keys dropped, renamed or added, values swapped for other
types, huge numbers, deep nesting, duplicates; text: truncation, stray bytes, broken syntax)
and run in-process through click's runner, the bulk of it; a handful go through the installed
``crdkit`` entry point in a subprocess. A refusal of file contents must be exactly one line on
stderr; a refusal of mangled arguments may also be click's usage message. Each test prints its
counts (``pytest -s``); ``CRDKIT_FUZZ_SEED`` and ``CRDKIT_FUZZ_SCALE`` vary and grow the run.
"""

from __future__ import annotations

import base64
import copy
import json
import logging
import math
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

import crdkit.runtime.cli
import crdkit.testing.envtest.control_plane
from crdkit.cli import main
from crdkit.testing.envtest.certs import Pki, generate_pki
from crdkit.testing.errors import BinariesNotFoundError

SEED = int(os.environ.get("CRDKIT_FUZZ_SEED", "15"))
SCALE = float(os.environ.get("CRDKIT_FUZZ_SCALE", "1"))
HELLO = "examples.hello.operator:HelloReconciler"
EXEC_V1 = "client.authentication.k8s.io/v1"


BUDGET = 50.0  # seconds per fuzz test, well inside the 120 s per-test timeout


def count(base: int) -> int:
    return max(1, round(base * SCALE))


def inputs(base: int, minimum: int = 100) -> Iterator[int]:
    """``count(base)`` indexes, fewer (but at least ``minimum``) if the budget runs out: on a
    machine loaded by other builds the test stays inside its timeout, and says how many ran."""
    deadline = time.monotonic() + BUDGET * max(1.0, SCALE)
    for index in range(count(base)):
        if index >= minimum and time.monotonic() > deadline:
            return
        yield index


# -- tallying ---------------------------------------------------------------------------------


@dataclass
class Tally:
    """Inputs, results (exit 0), clean refusals (exit 2) and everything else."""

    name: str
    inputs: int = 0
    results: int = 0
    refusals: int = 0
    tracebacks: int = 0
    failures: list[str] = field(default_factory=list)

    def record(
        self,
        result: Result,
        what: str,
        *,
        usage_ok: bool,
        check_output: bool,
        also_a_result: str | None = None,
    ) -> None:
        """Count one run. ``also_a_result``: a stderr text that makes exit status 1 a result
        too (``gen-crd --check`` exits 1 when files are out of date)."""
        self.inputs += 1
        if also_a_result and result.exit_code == 1 and also_a_result in result.stderr:
            self.results += 1
            return
        problem = _problem(result, usage_ok=usage_ok, check_output=check_output)
        if problem is None:
            if result.exit_code == 0:
                self.results += 1
            else:
                self.refusals += 1
            return
        self.tracebacks += 1
        if len(self.failures) < 5:
            detail = f"{result.exception!r}: {result.stderr[-300:]!r}"
            self.failures.append(f"{what}: {problem}: {detail}")

    def report(self, record_property: Callable[[str, object], None]) -> None:
        line = (
            f"fuzz {self.name}: inputs {self.inputs}, results {self.results}, "
            f"clean refusals {self.refusals}, tracebacks {self.tracebacks} (seed {SEED})"
        )
        print(line)
        record_property(f"fuzz_{self.name}", line)
        assert self.tracebacks == 0, "\n".join(self.failures)
        assert self.inputs == self.results + self.refusals


def _problem(result: Result, *, usage_ok: bool, check_output: bool) -> str | None:
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return "exception"
    if "Traceback (most recent call last)" in result.output:
        return "traceback printed"
    if result.exit_code == 0:
        if check_output:
            try:
                json.loads(result.stdout)
            except ValueError:
                return "exit 0 without JSON on stdout"
        return None
    if result.exit_code != 2:
        return f"exit status {result.exit_code}"
    lines = result.stderr.splitlines()
    if len(lines) == 1:
        return None
    if usage_ok and lines and lines[0].startswith("Usage: ") and lines[-1].startswith("Error: "):
        return None  # click's own usage message for mangled arguments
    return f"refusal of {len(lines)} lines"


@pytest.fixture
def runner() -> Iterator[CliRunner]:
    # `crdkit run` points the root logger at the runner's stream; put it back afterwards.
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield CliRunner()
    root.handlers[:] = handlers
    root.setLevel(level)


# -- mutation ---------------------------------------------------------------------------------

DEEP = "@@deep@@"
WEIRD: list[Any] = [
    None,
    "",
    0,
    -1,
    1.5,
    2**63,
    2**64,
    10**30,
    1e308,
    math.nan,
    math.inf,
    True,
    "abc",
    "-1",
    "1e400",
    "\ud800",
    "nul\x00byte",
    "é" * 3,
    "x" * 2000,
    [],
    {},
    [1, "two", None],
    {"a": {"b": ["c"]}},
    DEEP,
]


class Mutator:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def document(self, document: Any, changes: int | None = None) -> Any:
        result = copy.deepcopy(document)
        for _ in range(changes or self.rng.randint(1, 3)):
            result = self._once(result)
        return result

    def _once(self, document: Any) -> Any:
        slots = list(_slots(document))
        if not slots:
            return self.rng.choice(WEIRD)
        parent, key = self.rng.choice(slots)
        value = parent[key]
        action = self.rng.randrange(8)
        if action == 0 and isinstance(parent, dict):
            del parent[key]
        elif action == 0:
            parent.pop(key)
        elif action == 1 and isinstance(parent, dict):
            parent[self.string(str(key))] = parent.pop(key)  # a typo in a key
        elif action == 2 and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(value))  # a duplicate (names repeat)
        elif action == 3 and isinstance(parent, dict):
            parent[self.string("extra")] = self.rng.choice(WEIRD)
        elif action == 4 and isinstance(value, str):
            parent[key] = self.string(value)
        elif action == 5 and isinstance(value, int) and not isinstance(value, bool):
            parent[key] = self.rng.choice([0, -value, value * 2**40, 2**64, 2**64 - 1, 2**128])
        elif action == 6 and isinstance(value, dict):
            parent[key] = list(value.values())
        else:
            parent[key] = copy.deepcopy(self.rng.choice(WEIRD))
        return document

    def string(self, text: str) -> str:
        chars = list(text)
        for _ in range(self.rng.randint(1, 3)):
            position = self.rng.randint(0, len(chars))
            choice = self.rng.randrange(3)
            if choice == 0 and chars:
                del chars[min(position, len(chars) - 1)]
            elif choice == 1:
                chars.insert(position, self.rng.choice("._:-/ aZ9\\\"'\n\t\u00e9"))
            elif chars:
                chars[min(position, len(chars) - 1)] = self.rng.choice("xX0:.")
        return "".join(chars)

    def text(self, text: str) -> bytes:
        data = bytearray(text.encode("utf-8", "surrogatepass"))
        for _ in range(self.rng.randint(1, 4)):
            position = self.rng.randint(0, len(data))
            choice = self.rng.randrange(5)
            if choice == 0:
                data = data[:position]  # truncated
            elif choice == 1:
                data[position:position] = self.rng.choice(
                    [b"\xff", b"\x00", b"{", b"]", b'"', b":", b"- ", b"&a ", b"*a", b"!!x ", b"\t"]
                )
            elif choice == 2 and data:
                del data[min(position, len(data) - 1)]
            elif choice == 3:
                data[position:position] = b"\n" + b"  " * self.rng.randint(0, 5)
            else:
                data[position:position] = self.rng.choice([b"NaN", b"1e999", b"2001-02-30", b"~"])
        return bytes(data)

    def serialize(self, document: Any) -> bytes:
        """JSON mostly, YAML sometimes; a DEEP marker becomes thousands of nested lists."""
        depth = self.rng.choice([70, 3000, 100_000])
        if self.rng.random() < 0.3:
            try:
                text = yaml.safe_dump(document, allow_unicode=True)
            except Exception:  # a lone surrogate, say: YAML cannot write it, JSON can
                text = json.dumps(document)
            text = text.replace(DEEP, "[" * min(depth, 3000) + "]" * min(depth, 3000))
        else:
            text = json.dumps(document).replace(f'"{DEEP}"', "[" * depth + "]" * depth)
        return text.encode("utf-8", "surrogatepass")


def _slots(document: Any) -> Iterator[tuple[Any, Any]]:
    """Every (container, key) pair of a JSON-like tree."""
    stack = [document]
    while stack:
        value = stack.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, child in list(items):
            yield value, key
            if isinstance(child, dict | list):
                stack.append(child)


# -- crdkit place -----------------------------------------------------------------------------

CLUSTER: dict[str, Any] = {
    "levels": ["example.com/block", "example.com/rack"],
    "nodes": [
        {
            "name": f"n{i}",
            "labels": {"example.com/block": f"b{i // 4}", "example.com/rack": f"r{i // 2}"},
            "allocatable": {"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": 8},
            "used": {"cpu": "500m"},
            "taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}] if i == 0 else [],
            "unschedulable": i == 3,
            "ready": True,
        }
        for i in range(4)
    ],
}
GANG: dict[str, Any] = {
    "name": "train",
    "priority": 5,
    "topology": {"mode": "required", "level": "example.com/block"},
    "tasks": [
        {"name": "master", "replicas": 1, "requests": {"cpu": "2"}},
        {
            "name": "worker",
            "replicas": 4,
            "minAvailable": 2,
            "requests": {"nvidia.com/gpu": 4, "cpu": 8},
            "nodeSelector": {"example.com/block": "b0"},
            "tolerations": [{"key": "gpu", "operator": "Exists"}],
            "slice": {"level": "example.com/rack", "size": 2},
            "topology": {"mode": "preferred", "level": "example.com/rack"},
        },
    ],
}


def test_place_fuzz(
    tmp_path: Path, runner: CliRunner, record_property: Callable[[str, object], None]
) -> None:
    rng = random.Random(SEED)
    mutate = Mutator(rng)
    tally = Tally("place")
    files = {name: tmp_path / f"{name}.json" for name in ("cluster", "gang", "gangs")}
    seeds = {"cluster": CLUSTER, "gang": GANG, "gangs": [GANG, {**GANG, "name": "second"}]}
    specials: list[bytes] = [
        b"",
        b"   \n",
        b"\xef\xbb\xbf{}",
        b"\xff\xfe\x00",
        b"[" * 100_000 + b"]" * 100_000,
        b"{" * 50_000,
        b"&a [*a]",
        b"a: &a {b: *a}",
        b"7",
        b'"text"',
        json.dumps(str(tmp_path / "cluster.json")).encode(),  # a string naming a real file
        b"NaN",
        b"!!python/object:os.system {}",
    ]
    for index in inputs(2000):
        documents = {name: copy.deepcopy(seed) for name, seed in seeds.items()}
        target = rng.choice(["cluster", "gang", "gang", "gangs"])
        mode = rng.random()
        for name, path in files.items():
            path.write_bytes(json.dumps(documents[name]).encode())
        if mode < 0.7:
            files[target].write_bytes(mutate.serialize(mutate.document(documents[target])))
        elif mode < 0.85:
            files[target].write_bytes(mutate.text(json.dumps(documents[target])))
        else:
            files[target].write_bytes(rng.choice(specials))
        batch = target == "gangs" or (target == "cluster" and rng.random() < 0.3)
        args = ["place", "--cluster", str(files["cluster"])]
        args += ["--gangs", str(files["gangs"])] if batch else ["--gang", str(files["gang"])]
        usage_ok = rng.random() < 0.05
        if usage_ok:  # now and then a mangled argument too
            args += rng.choice([["--policy", "worst-fit"], ["--gang"], ["--nope"], []])
        else:
            args += ["--policy", rng.choice(["best-fit", "least-free", "binpack"])]
        result = runner.invoke(main, args)
        tally.record(result, f"place #{index} {target}", usage_ok=usage_ok, check_output=True)
    tally.report(record_property)


# -- crdkit gen-crd and gen-rbac --------------------------------------------------------------

CRD_TARGETS = ["examples.hello.operator:Hello", "examples.hello.operator"]
RBAC_TARGETS = [HELLO]


def _target(mutate: Mutator, rng: random.Random, valid: list[str]) -> str:
    target = rng.choice(valid)
    action = rng.randrange(5)
    if action == 0:
        return target
    if action == 1:
        module, _, cls = target.partition(":")
        parts = module.split(".")
        del parts[rng.randrange(len(parts))]  # a missing segment
        return ".".join(parts) + (f":{cls}" if cls else "")
    if action == 2:
        return rng.choice(["", ":", "::", ".", ":Hello", "examples.hello.operator:", "a:b:c"])
    # Edits of the class part only, or of characters anywhere (never a new module name that
    # imports something with side effects: edits of these names are not importable).
    return mutate.string(target)


def test_gen_crd_and_gen_rbac_fuzz(
    tmp_path: Path, runner: CliRunner, record_property: Callable[[str, object], None]
) -> None:
    rng = random.Random(SEED + 1)
    mutate = Mutator(rng)
    tally = Tally("gen-crd/gen-rbac")
    (tmp_path / "a-file").write_text("")
    (tmp_path / "stale").mkdir()
    (tmp_path / "stale" / "hello.example.com_hellos.yaml").write_bytes(b"\xff stale")
    outputs = [[], ["-o", "out"], ["-o", "a-file"], ["-o", "a-file/sub"], ["--check", "stale"]]
    outputs += [["--check", "missing"], ["--check", "out"], ["-o", "out", "--check", "out"]]
    rbac_outputs = [[], ["-o", "rbac.yaml"], ["-o", "missing/rbac.yaml"], ["-o", "stale"]]
    names = ["hello", "", "x" * 300, "UPPER_case", "a b", "-dash", "ünï"]
    cwd, saved_path = Path.cwd(), sys.path[:]
    for index in inputs(500):
        os.chdir(tmp_path)  # relative outputs land here; the examples import from the repo
        sys.path.insert(0, str(cwd))
        try:
            if index % 2 == 0:
                targets = [_target(mutate, rng, CRD_TARGETS) for _ in range(rng.randint(1, 2))]
                args = ["gen-crd", *targets, *rng.choice(outputs)]
            else:
                targets = [_target(mutate, rng, RBAC_TARGETS) for _ in range(rng.randint(1, 2))]
                args = ["gen-rbac", *targets, *rng.choice(rbac_outputs)]
                if rng.random() < 0.5:
                    args += ["--name", rng.choice(names), "--service-account", rng.choice(names)]
            result = runner.invoke(main, args)
        finally:
            sys.path[:] = saved_path  # the loaders add the current folder to it
            os.chdir(cwd)
        tally.record(
            result, f"{args}", usage_ok=True, check_output=False, also_a_result="out of date"
        )
    tally.report(record_property)


# -- crdkit run: the kubeconfig path ----------------------------------------------------------


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def kubeconfig_seeds(folder: Path, pki: Pki) -> list[dict[str, Any]]:
    (folder / "ca.crt").write_bytes(pki.ca_cert.read_bytes())
    (folder / "token").write_text("file-token")
    plugin = folder / "plugin.py"
    credential = {"apiVersion": EXEC_V1, "kind": "ExecCredential", "status": {"token": "t"}}
    plugin.write_text(f"print({json.dumps(json.dumps(credential))})\n")
    clusters = [
        {
            "name": "embedded",
            "cluster": {
                "server": "https://127.0.0.1:1",
                "certificate-authority-data": _b64(pki.ca_cert),
            },
        },
        {
            "name": "files",
            "cluster": {
                "server": "https://127.0.0.1:2",
                "certificate-authority": "ca.crt",
                "tls-server-name": "kubernetes",
                "proxy-url": "http://127.0.0.1:3",
            },
        },
        {
            "name": "insecure",
            "cluster": {"server": "https://h:4", "insecure-skip-tls-verify": True},
        },
    ]
    users = [
        {
            "name": "cert",
            "user": {
                "client-certificate-data": _b64(pki.client_cert),
                "client-key-data": _b64(pki.client_key),
            },
        },
        {"name": "token", "user": {"token": "abc"}},
        {"name": "token-file", "user": {"tokenFile": "token"}},
        {"name": "basic", "user": {"username": "ada", "password": "pw"}},
    ]
    exec_user = {
        "name": "exec",
        "user": {
            "exec": {
                "apiVersion": EXEC_V1,
                "command": sys.executable,
                "args": [str(plugin)],
                "interactiveMode": "Never",
                "env": [{"name": "A", "value": "b"}],
            }
        },
    }
    seeds = []
    for cluster in clusters:
        for user in users:
            seeds.append(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [cluster, *clusters],
                    "users": [user, exec_user],
                    "contexts": [
                        {
                            "name": "main",
                            "context": {"cluster": cluster["name"], "user": user["name"]},
                        },
                        {"name": "anonymous", "context": {"cluster": "embedded"}},
                        {"name": "exec", "context": {"cluster": "embedded", "user": "exec"}},
                    ],
                    "current-context": "main",
                }
            )
    return seeds


def _runs_a_plugin(document: Any, context: str | None) -> bool:
    if not isinstance(document, dict):
        return False
    return context == "exec" or document.get("current-context") == "exec"


def test_run_kubeconfig_fuzz(
    tmp_path: Path,
    runner: CliRunner,
    monkeypatch: pytest.MonkeyPatch,
    record_property: Callable[[str, object], None],
) -> None:
    async def accepted(self: object) -> None:
        return None  # the kubeconfig was accepted and a credential fetched: stop here

    # What is fuzzed is reading the kubeconfig; a manager would then run until stopped.
    monkeypatch.setattr(crdkit.runtime.cli.Manager, "run", accepted)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    rng = random.Random(SEED + 2)
    mutate = Mutator(rng)
    tally = Tally("run --kubeconfig")
    seeds = kubeconfig_seeds(tmp_path, generate_pki(tmp_path / "pki"))
    path, other = tmp_path / "kubeconfig", tmp_path / "second"
    plugin_runs = 0
    for index in inputs(1200):
        document = copy.deepcopy(rng.choice(seeds))
        context = rng.choice([None, None, None, "anonymous", "main", "nope", "exec"])
        if _runs_a_plugin(document, context):
            if plugin_runs >= count(25):  # each costs a Python start-up
                context = None
            plugin_runs += 1
        mode = rng.random()
        if mode < 0.7:
            path.write_bytes(mutate.serialize(mutate.document(document)))
        elif mode < 0.9:
            path.write_bytes(mutate.text(yaml.safe_dump(document)))
        else:
            path.write_bytes(rng.choice([b"", b"just text", b"- a\n", b"\xff", b"[" * 5000]))
        args = ["run", HELLO, "--exec-timeout", "5"]
        args += ["--context", context] if context else []
        env = None
        if rng.random() < 0.2:  # KUBECONFIG with two files merged, one of them mangled
            other.write_text(yaml.safe_dump(rng.choice(seeds)))
            order = [str(other), str(path)] if rng.random() < 0.5 else [str(path), str(other)]
            env = {"KUBECONFIG": os.pathsep.join([*order, str(tmp_path / "absent")])}
        else:
            args += ["--kubeconfig", str(path)]
        result = runner.invoke(main, args, env=env)
        tally.record(result, f"run #{index}", usage_ok=False, check_output=False)
    tally.report(record_property)


# -- crdkit envtest: argument handling --------------------------------------------------------


def test_envtest_arguments_fuzz(
    tmp_path: Path,
    runner: CliRunner,
    monkeypatch: pytest.MonkeyPatch,
    record_property: Callable[[str, object], None],
) -> None:
    def no_binaries() -> Any:
        raise BinariesNotFoundError("no kube-apiserver and etcd here (fuzzing arguments)")

    # Arguments that pass every check end where a real run would start the control plane.
    monkeypatch.setattr(crdkit.testing.envtest.control_plane, "find_binaries", no_binaries)
    rng = random.Random(SEED + 3)
    mutate = Mutator(rng)
    tally = Tally("envtest")
    crd = yaml.safe_load(Path("examples/hello/hello.example.com_hellos.yaml").read_text())
    crds = tmp_path / "crds"
    crds.mkdir()
    script = tmp_path / "not-executable.sh"
    script.write_text("exit 0\n")
    for _ in inputs(400):
        mangled = crds / "crd.yaml"
        if rng.random() < 0.6:
            mangled.write_bytes(mutate.serialize(mutate.document(crd)))
        else:
            mangled.write_bytes(mutate.text(yaml.safe_dump(crd)))
        crd_args = rng.choice(
            [[], ["--crds", str(mangled)], ["--crds", str(crds)], ["--crds", str(tmp_path / "no")]]
        )
        if rng.random() < 0.5:
            command = rng.choice(
                [["true"], ["crdkit-no-such-command"], [str(script)], [""], ["true", "--x"]]
            )
            args = ["envtest", "run", *crd_args, "--", *command]
            if rng.random() < 0.1:
                args = ["envtest", "run", *crd_args]  # no command at all
        else:
            target = rng.choice(["kc", "missing/kc", "crds", ""])
            args = ["envtest", "up", *crd_args]
            args += ["--kubeconfig", str(tmp_path / target)] if target else []
        if rng.random() < 0.05:
            args.insert(2, rng.choice(["--nope", "-x", "--crds"]))
        result = runner.invoke(main, args)
        tally.record(result, f"{args}", usage_ok=True, check_output=False)
    tally.report(record_property)


# -- the real entry point, a handful of times -------------------------------------------------


def test_the_installed_command_never_prints_a_traceback(tmp_path: Path) -> None:
    crdkit = str(Path(sys.executable).parent / "crdkit")
    (tmp_path / "cluster.json").write_text(json.dumps(CLUSTER))
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "named.json").write_text(json.dumps(str(tmp_path / "cluster.json")))
    (tmp_path / "kc").write_text("clusters: {}\n")
    (tmp_path / "crds.yaml").write_text("- not a mapping\n")
    cluster, deep, named = (str(tmp_path / n) for n in ("cluster.json", "deep.json", "named.json"))
    cases = [
        (["place", "--cluster", cluster, "--gang", deep], "nested too deeply"),
        (["place", "--cluster", named, "--gang", deep], "got a string"),
        (["run", HELLO, "--kubeconfig", str(tmp_path / "kc")], "clusters: expected a list"),
        (["gen-crd", "examples.hello.operatr"], "cannot import module"),
        (["gen-rbac", "examples.hello.operator:Nope"], "has no attribute"),
        (["envtest", "run", "--crds", str(tmp_path / "crds.yaml"), "--", "true"], "not a mapping"),
    ]
    for args, message in cases:
        done = subprocess.run(
            [crdkit, *args], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr
        assert message in done.stderr, (args, done.stderr)
