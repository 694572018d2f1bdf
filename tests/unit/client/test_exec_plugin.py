"""Exec credential plugins, run by crdkit: real plugin scripts, caching, the timeout that keeps a
plugin that never answers from hanging an operator, and a clear line for every failure."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from crdkit.client.errors import ConfigError
from crdkit.client.exec_plugin import ExecCredentials

V1 = "client.authentication.k8s.io/v1"


def plugin(tmp_path: Path, body: str, **config: Any) -> dict[str, Any]:
    """An exec entry running a Python script whose code is ``body``."""
    script = tmp_path / "plugin.py"
    script.write_text(textwrap.dedent(body))
    return {
        "apiVersion": V1,
        "command": sys.executable,
        "args": [str(script)],
        "interactiveMode": "Never",
        **config,
    }


def answering(tmp_path: Path, status: dict[str, Any], api_version: str = V1) -> dict[str, Any]:
    credential = {"apiVersion": api_version, "kind": "ExecCredential", "status": status}
    return plugin(tmp_path, f"print({json.dumps(json.dumps(credential))})")


def counting(tmp_path: Path, expiry: str | None) -> dict[str, Any]:
    """A plugin that counts its runs in a file and answers token t<run>."""
    counter = tmp_path / "runs"
    counter.write_text("0")
    extra = f', "expirationTimestamp": "{expiry}"' if expiry else ""
    return plugin(
        tmp_path,
        f"""
        import json, pathlib
        counter = pathlib.Path({str(counter)!r})
        runs = int(counter.read_text()) + 1
        counter.write_text(str(runs))
        status = json.loads('{{"token": "t' + str(runs) + '"{extra}}}')
        print(json.dumps({{"apiVersion": "{V1}", "kind": "ExecCredential", "status": status}}))
        """,
    )


async def test_token_is_cached_until_invalidated(tmp_path: Path) -> None:
    credentials = ExecCredentials(counting(tmp_path, None))
    assert await credentials.authorization() == "Bearer t1"
    assert await credentials.authorization() == "Bearer t1"  # no expiry: reused
    credentials.invalidate()  # what a 401 does
    assert await credentials.authorization() == "Bearer t2"


async def test_token_refreshes_before_expiry(tmp_path: Path) -> None:
    credentials = ExecCredentials(counting(tmp_path, "2000-01-01T00:00:00Z"))
    assert await credentials.authorization() == "Bearer t1"
    assert await credentials.authorization() == "Bearer t2"  # already expired: run again
    (tmp_path / "later").mkdir()
    later = ExecCredentials(counting(tmp_path / "later", "2999-01-01T00:00:00Z"))
    assert await later.authorization() == "Bearer t1"
    assert await later.authorization() == "Bearer t1"  # far from expiry: reused


async def test_a_plugin_that_never_answers_is_killed_after_the_timeout(tmp_path: Path) -> None:
    # Regression (issue 15): such a plugin hung `crdkit run` with no output at all. The
    # plugin also starts a child that would keep the pipe open: both must go.
    child_pid = tmp_path / "child.pid"
    config = plugin(
        tmp_path,
        f"""
        import pathlib, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        pathlib.Path({str(child_pid)!r}).write_text(str(child.pid))
        time.sleep(600)
        """,
    )
    credentials = ExecCredentials(config, timeout=1.5, where='kubeconfig /k: user "u"')
    # The message says the timeout fired; a hang (the plugin sleeps 600 s) would hit the
    # test's own timeout instead. No wall-clock bound: a loaded machine can miss one.
    with pytest.raises(ConfigError) as caught:
        await credentials.authorization()
    assert str(caught.value) == (
        f'kubeconfig /k: user "u": exec plugin {sys.executable!r}: no answer after 1.5 s, '
        "killed (the limit is the exec timeout, e.g. crdkit run --exec-timeout)"
    )
    pid = int(child_pid.read_text())
    for _ in range(50):  # the kill is immediate; reaping by init may take a moment
        if not _alive(pid):
            break
        await asyncio.sleep(0.1)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split()[2] == "Z")  # zombie: dead


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "import sys; print('denied: no SSO session', file=sys.stderr); sys.exit(3)",
            r"exited with status 3: denied: no SSO session$",
        ),
        ("print('hello')", r"printed no ExecCredential JSON$"),
        ('print(\'{"kind": "Other"}\')', r"printed something else than an ExecCredential$"),
    ],
)
async def test_a_failing_plugin_is_one_line(tmp_path: Path, body: str, message: str) -> None:
    credentials = ExecCredentials(plugin(tmp_path, body), where="W")
    with pytest.raises(ConfigError, match=rf"^W: exec plugin '.*python.*': {message}"):
        await credentials.authorization()


@pytest.mark.parametrize(
    ("status", "api_version", "message"),
    [
        (
            {"token": "t"},
            "client.authentication.k8s.io/v1beta1",
            r"answered apiVersion '.*v1beta1'",
        ),
        ({}, V1, r"answered without status.token"),
        ({"clientCertificateData": "c", "clientKeyData": "k"}, V1, r"a client certificate"),
        ({"token": "t", "expirationTimestamp": "soon"}, V1, r"bad status.expirationTimestamp"),
    ],
)
async def test_a_bad_answer_is_one_line(
    tmp_path: Path, status: dict[str, Any], api_version: str, message: str
) -> None:
    credentials = ExecCredentials(answering(tmp_path, status, api_version))
    with pytest.raises(ConfigError, match=message):
        await credentials.authorization()


async def test_a_missing_command_shows_the_install_hint() -> None:
    credentials = ExecCredentials(
        {
            "apiVersion": V1,
            "command": "crdkit-no-such-plugin",
            "interactiveMode": "Never",
            "installHint": "install it with\n  brew install no-such-plugin",
        },
        where="W",
    )
    with pytest.raises(ConfigError) as caught:
        await credentials.authorization()
    assert str(caught.value) == (
        "W: exec plugin 'crdkit-no-such-plugin': command not found "
        "(install it with brew install no-such-plugin)"
    )


async def test_a_command_that_cannot_be_run_is_one_line(tmp_path: Path) -> None:
    base = {"apiVersion": V1, "interactiveMode": "Never"}
    with pytest.raises(ConfigError, match=r"^W: exec plugin '.*': cannot run: Permission denied"):
        await ExecCredentials({**base, "command": str(tmp_path)}, where="W").authorization()
    with pytest.raises(ConfigError, match=r"cannot run: embedded null byte"):
        await ExecCredentials({**base, "command": "a\x00b"}, where="W").authorization()


async def test_the_plugin_gets_env_exec_info_and_cluster_info(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    config = plugin(
        tmp_path,
        f"""
        import json, os, pathlib
        pathlib.Path({str(seen)!r}).write_text(json.dumps(
            {{"info": json.loads(os.environ["KUBERNETES_EXEC_INFO"]), "x": os.environ["X"]}}))
        print(json.dumps({{"apiVersion": "{V1}", "kind": "ExecCredential",
                           "status": {{"token": "ok"}}}}))
        """,
        env=[{"name": "X", "value": "from-kubeconfig"}],
        provideClusterInfo=True,
    )
    cluster = {"server": "https://h:1", "config": {"audience": "a"}}
    credentials = ExecCredentials(config, cluster=cluster)
    assert await credentials.authorization() == "Bearer ok"
    received = json.loads(seen.read_text())
    assert received["x"] == "from-kubeconfig"
    assert received["info"] == {
        "apiVersion": V1,
        "kind": "ExecCredential",
        "spec": {"interactive": False, "cluster": cluster},
    }


async def test_a_relative_command_with_a_slash_is_found_next_to_the_kubeconfig(
    tmp_path: Path,
) -> None:
    (tmp_path / "bin").mkdir()
    script = tmp_path / "bin" / "token-plugin"
    credential = {"apiVersion": V1, "kind": "ExecCredential", "status": {"token": "rel"}}
    script.write_text(f"#!{sys.executable}\nprint({json.dumps(json.dumps(credential))})\n")
    script.chmod(0o755)
    config = {"apiVersion": V1, "command": "bin/token-plugin", "interactiveMode": "Never"}
    assert await ExecCredentials(config, folder=tmp_path).authorization() == "Bearer rel"


async def test_always_interactive_needs_a_terminal(tmp_path: Path) -> None:
    config = answering(tmp_path, {"token": "t"})
    config["interactiveMode"] = "Always"
    with pytest.raises(ConfigError, match="interactiveMode Always needs a terminal"):
        await ExecCredentials(config).authorization()  # pytest's stdin is no terminal


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"apiVersion": V1, "interactiveMode": "Never"}, r"exec.command: missing"),
        ({"apiVersion": V1, "command": 7}, r"exec.command: expected a string"),
        ({"command": "aws"}, r"exec.apiVersion: missing \(one of: .*/v1, .*/v1beta1\)"),
        (
            {"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "aws"},
            r"exec.apiVersion: '.*v1alpha1' is not supported",
        ),
        ({"apiVersion": V1, "command": "aws"}, r"exec.interactiveMode: missing"),
        (
            {"apiVersion": V1, "command": "aws", "interactiveMode": "Sometimes"},
            r"exec.interactiveMode: 'Sometimes' is not supported",
        ),
        (
            {"apiVersion": V1, "command": "aws", "interactiveMode": "Never", "args": "x"},
            r"exec.args: expected a list of strings",
        ),
        (
            {"apiVersion": V1, "command": "aws", "interactiveMode": "Never", "env": [{"n": 1}]},
            r"exec.env\[0\]: expected a mapping with name and value strings",
        ),
        (
            {
                "apiVersion": V1,
                "command": "aws",
                "interactiveMode": "Never",
                "provideClusterInfo": "yes",
            },
            r"exec.provideClusterInfo: expected true or false",
        ),
    ],
)
def test_a_malformed_exec_entry_is_refused_when_loaded(
    config: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=rf"^kubeconfig F: user \"u\": {message}"):
        ExecCredentials(config, where='kubeconfig F: user "u"')


def test_v1beta1_defaults_interactive_mode_and_the_timeout_must_be_positive() -> None:
    beta = {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "aws"}
    assert ExecCredentials(beta).interactive_mode == "IfAvailable"
    with pytest.raises(ValueError, match="timeout must be positive"):
        ExecCredentials(beta, timeout=0)
