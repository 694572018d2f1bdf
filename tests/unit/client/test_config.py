"""Configuration from kubeconfig files (certificates, tokens, token files, exec plugins) and
from in-cluster service-account files."""

from __future__ import annotations

import base64
import ssl
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from crdkit.client.auth import (
    ExecCredentials,
    NoCredentials,
    StaticCredentials,
    TokenFileCredentials,
)
from crdkit.client.config import ClientConfig
from crdkit.client.errors import ConfigError
from crdkit.testing.certs import Pki, generate_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return generate_pki(tmp_path_factory.mktemp("pki"))


def b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def write_kubeconfig(path: Path, user: dict[str, Any], pki: Pki, **cluster: Any) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "c",
                "cluster": {
                    "server": "https://127.0.0.1:6443",
                    "certificate-authority-data": b64(pki.ca_cert),
                    **cluster,
                },
            }
        ],
        "users": [{"name": "u", "user": user}],
        "contexts": [
            {"name": "main", "context": {"cluster": "c", "user": "u"}},
            {"name": "other", "context": {"cluster": "c", "user": "u"}},
        ],
        "current-context": "main",
    }
    path.write_text(yaml.safe_dump(config))
    return path


async def test_client_certificates(tmp_path: Path, pki: Pki) -> None:
    user = {"client-certificate-data": b64(pki.client_cert), "client-key-data": b64(pki.client_key)}
    config = await ClientConfig.from_kubeconfig(write_kubeconfig(tmp_path / "kc", user, pki))
    assert config.server == "https://127.0.0.1:6443"
    assert isinstance(config.ssl_context, ssl.SSLContext)
    assert config.ssl_context.verify_mode == ssl.CERT_REQUIRED
    assert isinstance(config.credentials, NoCredentials)


async def test_static_token_and_tls_options(tmp_path: Path, pki: Pki) -> None:
    path = write_kubeconfig(
        tmp_path / "kc",
        {"token": "abc"},
        pki,
        **{"insecure-skip-tls-verify": True, "tls-server-name": "api.internal"},
    )
    config = await ClientConfig.from_kubeconfig(path, context="other")
    assert isinstance(config.credentials, StaticCredentials)
    assert await config.credentials.authorization() == "Bearer abc"
    assert config.tls_server_name == "api.internal"
    assert config.ssl_context is not None
    assert config.ssl_context.verify_mode == ssl.CERT_NONE


async def test_token_file_is_reread(tmp_path: Path, pki: Pki) -> None:
    token = tmp_path / "token"
    token.write_text("one\n")
    config = await ClientConfig.from_kubeconfig(
        write_kubeconfig(tmp_path / "kc", {"tokenFile": str(token)}, pki)
    )
    credentials = config.credentials
    assert isinstance(credentials, TokenFileCredentials)
    assert await credentials.authorization() == "Bearer one"
    token.write_text("two")
    assert await credentials.authorization() == "Bearer one"  # cached for a minute
    credentials.invalidate()  # what a 401 does
    assert await credentials.authorization() == "Bearer two"


def exec_plugin(tmp_path: Path, expiry: str | None) -> dict[str, Any]:
    """A real exec credential plugin: a script that counts its runs in a file."""
    counter = tmp_path / "runs"
    counter.write_text("0")
    status = f', "expirationTimestamp": "{expiry}"' if expiry else ""
    script = tmp_path / "plugin.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import json, pathlib
            counter = pathlib.Path({str(counter)!r})
            runs = int(counter.read_text()) + 1
            counter.write_text(str(runs))
            print(json.dumps({{
                "apiVersion": "client.authentication.k8s.io/v1",
                "kind": "ExecCredential",
                "status": json.loads('{{"token": "t' + str(runs) + '"{status}}}'),
            }}))
            """
        )
    )
    return {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": sys.executable,
        "args": [str(script)],
        "interactiveMode": "Never",
    }


async def test_exec_plugin_token_is_cached_until_invalidated(tmp_path: Path, pki: Pki) -> None:
    user = {"exec": exec_plugin(tmp_path, None)}
    config = await ClientConfig.from_kubeconfig(write_kubeconfig(tmp_path / "kc", user, pki))
    credentials = config.credentials
    assert isinstance(credentials, ExecCredentials)
    first = await credentials.authorization()
    assert await credentials.authorization() == first  # no expiry: reused
    credentials.invalidate()
    assert await credentials.authorization() != first  # the plugin ran again


async def test_exec_plugin_token_refreshes_before_expiry(tmp_path: Path) -> None:
    credentials = ExecCredentials(exec_plugin(tmp_path, "2000-01-01T00:00:00Z"))
    assert await credentials.authorization() == "Bearer t1"
    assert await credentials.authorization() == "Bearer t2"  # already expired: run again


async def test_exec_plugin_failure_is_a_config_error(tmp_path: Path) -> None:
    credentials = ExecCredentials(
        {"apiVersion": "client.authentication.k8s.io/v1", "command": "false"}
    )
    with pytest.raises(ConfigError, match="exec credential plugin failed"):
        await credentials.authorization()
    with pytest.raises(ConfigError, match=r"users\[\]\.user\.exec"):
        ExecCredentials({"apiVersion": "client.authentication.k8s.io/v1"})


async def test_missing_kubeconfig(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        await ClientConfig.from_kubeconfig(tmp_path / "nope")


def test_in_cluster(tmp_path: Path, pki: Pki) -> None:
    (tmp_path / "token").write_text("sa-token")
    (tmp_path / "ca.crt").write_bytes(pki.ca_cert.read_bytes())
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    config = ClientConfig.from_incluster(environ=env, service_account_dir=tmp_path)
    assert config.server == "https://10.0.0.1:443"
    assert isinstance(config.credentials, TokenFileCredentials)
    ipv6 = ClientConfig.from_incluster(
        environ={**env, "KUBERNETES_SERVICE_HOST": "fd00::1"}, service_account_dir=tmp_path
    )
    assert ipv6.server == "https://[fd00::1]:443"


def test_in_cluster_errors_name_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="KUBERNETES_SERVICE_HOST"):
        ClientConfig.from_incluster(environ={}, service_account_dir=tmp_path)
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    with pytest.raises(ConfigError, match="token"):
        ClientConfig.from_incluster(environ=env, service_account_dir=tmp_path)


def test_server_must_be_a_url() -> None:
    with pytest.raises(ConfigError, match="server"):
        ClientConfig(server="127.0.0.1:6443")
    assert ClientConfig(server="https://h:1/").server == "https://h:1"


async def test_empty_token_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t").write_text("  ")
    with pytest.raises(ConfigError, match="empty"):
        await TokenFileCredentials(tmp_path / "t").authorization()
    with pytest.raises(ConfigError):
        StaticCredentials(" ")
