"""Unit tests of ``crdkit run`` argument handling (no cluster needed); gen-rbac: test_rbac_cli."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from crdkit.cli import main


def test_run_rejects_bad_options_before_connecting() -> None:
    runner = CliRunner()
    result = runner.invoke(
        main,
        [
            "run",
            "examples.hello.operator:HelloReconciler",
            "--max-concurrent-reconciles",
            "0",
        ],
    )
    assert result.exit_code == 2
    assert "max-concurrent-reconciles" in result.output
    result = runner.invoke(main, ["run", "not-a-reference"])
    assert result.exit_code == 2
    assert "expected module:ReconcilerClass" in result.output


def test_hello_crd_is_up_to_date() -> None:
    result = CliRunner().invoke(
        main, ["gen-crd", "--check", "examples/hello", "examples.hello.operator:Hello"]
    )
    assert result.exit_code == 0, result.output


HELLO = "examples.hello.operator:HelloReconciler"
EXEC_V1 = "client.authentication.k8s.io/v1"


def kubeconfig(path: Path, user: dict[str, object], **top: object) -> Path:
    config = {
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "main", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "main",
        **top,
    }
    path.write_text(yaml.safe_dump(config))
    return path


def one_line_refusal(result: Any) -> str:
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    return str(lines[0])


@pytest.mark.parametrize(
    ("top", "args", "message"),
    [
        ({"current-context": None}, [], ": no current-context is set and no context given"),
        ({}, ["--context", "prod"], ': context "prod" not found (known: main)'),
        ({"users": [{"name": "u", "user": {"token": 7}}]}, [], ': user "u": token: expected'),
    ],
)
def test_run_names_what_is_wrong_with_the_kubeconfig(
    tmp_path: Path, top: dict[str, object], args: list[str], message: str
) -> None:
    # Regression (issue 15): every malformed kubeconfig ended `crdkit run` in a traceback.
    path = kubeconfig(tmp_path / "kc", {"token": "t"}, **top)
    result = CliRunner().invoke(main, ["run", HELLO, "--kubeconfig", str(path), *args])
    line = one_line_refusal(result)
    assert line.startswith(f"crdkit run: kubeconfig {path}")
    assert message in line


def test_run_names_a_missing_kubeconfig_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", HELLO, "--kubeconfig", str(tmp_path / "nope")])
    assert one_line_refusal(result) == f"crdkit run: kubeconfig {tmp_path / 'nope'}: does not exist"


def test_run_reads_kubeconfig_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = kubeconfig(tmp_path / "kc", {"tokenFile": "missing-token"})
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    line = one_line_refusal(CliRunner().invoke(main, ["run", HELLO]))
    assert line.startswith(f'crdkit run: kubeconfig {path}: user "u": tokenFile:')


def test_run_times_out_an_exec_plugin_that_never_answers(tmp_path: Path) -> None:
    # Regression (issue 15): `crdkit run` hung with no output on such a plugin. Through the
    # real entry point: the timeout must work in a fresh process, with its own event loop.
    script = tmp_path / "hang.py"
    script.write_text("import time\ntime.sleep(600)\n")
    exec_config = {
        "apiVersion": EXEC_V1,
        "command": sys.executable,
        "args": [str(script)],
        "interactiveMode": "Never",
    }
    path = kubeconfig(tmp_path / "kc", {"exec": exec_config})
    crdkit = str(Path(sys.executable).parent / "crdkit")
    # The one-line refusal says the timeout fired (the plugin sleeps 600 s); subprocess's own
    # timeout catches a hang. No wall-clock bound: a loaded machine can miss one.
    done = subprocess.run(
        [crdkit, "run", HELLO, "--kubeconfig", str(path), "--exec-timeout", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f'crdkit run: kubeconfig {path}: user "u": exec plugin {sys.executable!r}: no answer '
        "after 1 s, killed (the limit is the exec timeout, e.g. crdkit run --exec-timeout)"
    ]


def test_gen_rbac_names_an_output_it_cannot_write(tmp_path: Path) -> None:
    target = tmp_path / "missing-folder" / "rbac.yaml"
    result = CliRunner().invoke(main, ["gen-rbac", HELLO, "-o", str(target)])
    assert one_line_refusal(result).startswith(f"crdkit gen-rbac: cannot write {target}: ")


def test_run_against_an_unreachable_apiserver_says_so_first_and_last(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: connecting is refused
    server = f"https://127.0.0.1:{port}"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from crdkit.cli import main; main()",
            "run",
            "examples.hello.operator:HelloReconciler",
            "--kubeconfig",
            str(kubeconfig),
            "--cache-sync-timeout",
            "5",  # ample for one refused connect on loopback, even on a loaded machine
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    problem = f"cannot reach {server}: connection refused"
    first = next(line for line in lines if "cannot reach" in line)
    assert f"{problem}; retrying" in first  # from the first failed attempt, as a warning
    assert sum("cannot reach" in line for line in lines[:-1]) == 1
    assert lines[-1].startswith(f"crdkit run: caches did not sync within 5s: {problem} (")
    assert "gen-rbac" not in lines[-1]
    assert lines[-1].endswith(
        "check the server address of the kubeconfig context and that the apiserver runs"
    )
