"""ClientConfig from kubeconfig files (TLS material, tokens, token files, basic auth, exec and
auth-provider users) and from in-cluster service-account files."""

from __future__ import annotations

import asyncio
import base64
import ssl
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from crdkit.client.auth import (
    AuthProviderCredentials,
    ExecCredentials,
    NoCredentials,
    StaticCredentials,
    TokenFileCredentials,
)
from crdkit.client.config import ClientConfig
from crdkit.client.errors import ConfigError
from crdkit.testing.envtest.certs import Pki, generate_pki
from factories import kubeconfig


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return generate_pki(tmp_path_factory.mktemp("pki"))


def b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def write_kubeconfig(path: Path, user: dict[str, Any], pki: Pki, **cluster: Any) -> Path:
    config = kubeconfig(
        user,
        {"main": {"cluster": "c", "user": "u"}, "other": {"cluster": "c", "user": "u"}},
        **{"certificate-authority-data": b64(pki.ca_cert), **cluster},
    )
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
        **{"tls-server-name": "api.internal", "proxy-url": "http://proxy.internal:3128"},
    )
    config = await ClientConfig.from_kubeconfig(path, context="other")
    assert isinstance(config.credentials, StaticCredentials)
    assert await config.credentials.authorization() == "Bearer abc"
    assert config.tls_server_name == "api.internal"
    assert config.proxy == "http://proxy.internal:3128"
    assert config.ssl_context is not None
    assert config.ssl_context.verify_mode == ssl.CERT_REQUIRED


async def test_insecure_skip_tls_verify(tmp_path: Path, pki: Pki) -> None:
    path = write_kubeconfig(tmp_path / "kc", {}, pki, **{"insecure-skip-tls-verify": True})
    config = yaml.safe_load(path.read_text())
    del config["clusters"][0]["cluster"]["certificate-authority-data"]  # kubectl refuses both
    path.write_text(yaml.safe_dump(config))
    loaded = await ClientConfig.from_kubeconfig(path)
    assert loaded.ssl_context is not None
    assert loaded.ssl_context.verify_mode == ssl.CERT_NONE
    assert not loaded.ssl_context.check_hostname


async def test_basic_auth_and_plain_http(tmp_path: Path, pki: Pki) -> None:
    path = write_kubeconfig(
        tmp_path / "kc", {"username": "ada", "password": "s3cret:x"}, pki, server="http://h:8080"
    )
    config = await ClientConfig.from_kubeconfig(path)
    assert config.ssl_context is None  # nothing to verify on plain HTTP
    expected = base64.b64encode(b"ada:s3cret:x").decode()
    assert await config.credentials.authorization() == f"Basic {expected}"


async def test_client_certificate_files_relative_to_the_kubeconfig(
    tmp_path: Path, pki: Pki
) -> None:
    folder = tmp_path / "conf"
    folder.mkdir()
    for name, source in (
        ("ca.crt", pki.ca_cert),
        ("c.crt", pki.client_cert),
        ("c.key", pki.client_key),
    ):
        (folder / name).write_bytes(source.read_bytes())
    path = write_kubeconfig(
        folder / "kc", {"client-certificate": "c.crt", "client-key": "c.key"}, pki
    )
    config = yaml.safe_load(path.read_text())
    cluster = config["clusters"][0]["cluster"]
    del cluster["certificate-authority-data"]
    cluster["certificate-authority"] = "ca.crt"
    path.write_text(yaml.safe_dump(config))
    loaded = await ClientConfig.from_kubeconfig(path)
    assert loaded.ssl_context is not None
    assert loaded.ssl_context.verify_mode == ssl.CERT_REQUIRED


def test_embedded_keys_leave_nothing_on_disk(
    tmp_path: Path, pki: Pki, monkeypatch: pytest.MonkeyPatch
) -> None:
    # load_cert_chain takes only files: they go to a private folder that must not outlive it.
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    user = {"client-certificate-data": b64(pki.client_cert), "client-key-data": b64(pki.client_key)}
    asyncio.run(ClientConfig.from_kubeconfig(write_kubeconfig(tmp_path / "kc", user, pki)))
    assert list(private_tmp.iterdir()) == []


@pytest.mark.parametrize(
    ("cluster", "user", "message"),
    [
        (
            {"certificate-authority-data": base64.b64encode(b"not a certificate").decode()},
            {},
            r'cluster "c": certificate-authority-data: not a PEM or DER certificate',
        ),
        (
            {},
            {"client-certificate-data": "Y2VydA==", "client-key-data": "a2V5"},
            r'user "u": client-certificate\(-data\): cannot be used',
        ),
        (
            {},
            "wrong key",
            r'user "u": client-key\(-data\) \(or it does not match client-certificate\)',
        ),
    ],
)
async def test_unusable_tls_material_names_its_key(
    tmp_path: Path, pki: Pki, cluster: dict[str, Any], user: Any, message: str
) -> None:
    if user == "wrong key":  # a real certificate with another key: a mismatched pair
        user = {
            "client-certificate-data": b64(pki.client_cert),
            "client-key-data": b64(pki.serving_key),
        }
    path = write_kubeconfig(tmp_path / "kc", user, pki, **cluster)
    with pytest.raises(ConfigError, match=rf"^kubeconfig {tmp_path}/kc: {message}"):
        await ClientConfig.from_kubeconfig(path)


async def test_exec_users_get_the_timeout_and_their_entry_name(tmp_path: Path, pki: Pki) -> None:
    exec_config = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": "bin/plugin",
        "interactiveMode": "Never",
        "provideClusterInfo": True,
    }
    path = write_kubeconfig(tmp_path / "kc", {"exec": exec_config}, pki)
    config = await ClientConfig.from_kubeconfig(path, exec_timeout=2.5)
    credentials = config.credentials
    assert isinstance(credentials, ExecCredentials)
    assert credentials.timeout == 2.5
    assert credentials.argv == [str(tmp_path / "bin" / "plugin")]
    assert credentials.cluster is not None
    assert credentials.cluster["server"] == "https://127.0.0.1:6443"
    assert base64.b64decode(credentials.cluster["certificate-authority-data"]) == (
        pki.ca_cert.read_bytes()
    )
    with pytest.raises(ConfigError, match=rf'^kubeconfig {tmp_path}/kc: user "u": exec plugin'):
        await credentials.authorization()  # bin/plugin is not there


async def test_a_malformed_exec_entry_fails_at_load_naming_the_user(
    tmp_path: Path, pki: Pki
) -> None:
    path = write_kubeconfig(tmp_path / "kc", {"exec": {"command": "aws"}}, pki)
    with pytest.raises(ConfigError, match=r'kc: user "u": exec.apiVersion: missing'):
        await ClientConfig.from_kubeconfig(path)


def test_loading_a_kubeconfig_does_not_import_kubernetes_asyncio(tmp_path: Path, pki: Pki) -> None:
    # Issue 14: kubernetes-asyncio (about a second to import) is for auth providers only.
    users = {
        "token": {"token": "abc"},
        "certificate": {
            "client-certificate-data": b64(pki.client_cert),
            "client-key-data": b64(pki.client_key),
        },
        "exec": {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": "x",
                "interactiveMode": "Never",
            }
        },
    }
    paths = [str(write_kubeconfig(tmp_path / name, user, pki)) for name, user in users.items()]
    probe = (
        "import asyncio, sys\n"
        "from crdkit.client import Client\n"
        f"for path in {paths!r}:\n"
        "    client = asyncio.run(Client.from_kubeconfig(path))\n"
        "    print(type(client.config.credentials).__name__, 'kubernetes_asyncio' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.splitlines() == [
        "StaticCredentials False",
        "NoCredentials False",
        "ExecCredentials False",
    ]


async def test_an_auth_provider_user_gets_provider_credentials(tmp_path: Path, pki: Pki) -> None:
    path = write_kubeconfig(tmp_path / "kc", {"auth-provider": {"name": "oidc"}}, pki)
    config = await ClientConfig.from_kubeconfig(path)
    assert isinstance(config.credentials, AuthProviderCredentials)


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


async def test_missing_kubeconfig(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        await ClientConfig.from_kubeconfig(tmp_path / "nope")


async def test_kubeconfig_env_and_context_override(
    tmp_path: Path, pki: Pki, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_kubeconfig(tmp_path / "kc", {"token": "abc"}, pki)
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'absent'}:{path}")
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert (await ClientConfig.load()).server == "https://127.0.0.1:6443"
    with pytest.raises(ConfigError, match=r'context "nope" not found \(known: main, other\)'):
        await ClientConfig.load(context="nope")


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
