"""crdkit's kubeconfig loader: kubectl's merge rules, path resolution, and one clear line for
every malformed kubeconfig (which file, which entry, which key)."""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from crdkit.client.errors import ConfigError
from crdkit.client.kubeconfig import kubeconfig_paths, read_kubeconfig
from factories import kubeconfig

CA = b"-----BEGIN CERTIFICATE-----\nnot parsed by the loader\n-----END CERTIFICATE-----\n"


def valid() -> dict[str, Any]:
    return kubeconfig(
        {"token": "abc"},
        {"main": {"cluster": "c", "user": "u", "namespace": "ml"}, "other": {"cluster": "c"}},
        **{"certificate-authority-data": base64.b64encode(CA).decode()},
    )


def write(path: Path, config: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(config, bytes):
        path.write_bytes(config)
    elif isinstance(config, str):
        path.write_text(config)
    else:
        path.write_text(yaml.safe_dump(config))
    return path


def cluster(config: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = config["clusters"][0]["cluster"]
    return body


def user(config: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = config["users"][0]["user"]
    return body


def context(config: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = config["contexts"][0]["context"]
    return body


def edit(change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    config = valid()
    change(config)
    return config


def test_a_token_kubeconfig_resolves_its_current_context(tmp_path: Path) -> None:
    loaded = read_kubeconfig([write(tmp_path / "kc", valid())])
    assert (loaded.context, loaded.namespace) == ("main", "ml")
    assert loaded.cluster.server == "https://127.0.0.1:6443"
    assert loaded.cluster.certificate_authority == CA
    assert loaded.user.token == "abc"
    assert loaded.user.where == f'kubeconfig {tmp_path / "kc"}: user "u"'


def test_a_context_without_user_is_anonymous(tmp_path: Path) -> None:
    loaded = read_kubeconfig([write(tmp_path / "kc", valid())], context="other")
    assert loaded.user.name is None
    assert loaded.user.token is None
    assert loaded.user.exec is None


def test_relative_paths_resolve_against_the_defining_files_folder(tmp_path: Path) -> None:
    folder = tmp_path / "conf"
    (folder / "pki").mkdir(parents=True)
    (folder / "pki" / "ca.crt").write_bytes(CA)
    (folder / "pki" / "c.crt").write_bytes(b"cert")
    (folder / "pki" / "c.key").write_bytes(b"key")
    (folder / "token").write_text("from-file")

    def relative(config: dict[str, Any]) -> None:
        cluster(config).pop("certificate-authority-data")
        cluster(config)["certificate-authority"] = "pki/ca.crt"
        config["users"][0]["user"] = {
            "client-certificate": "pki/c.crt",
            "client-key": "pki/c.key",
            "tokenFile": "token",
        }

    loaded = read_kubeconfig([write(folder / "kc", edit(relative))])
    assert loaded.cluster.certificate_authority == CA
    assert (loaded.user.client_certificate, loaded.user.client_key) == (b"cert", b"key")
    assert loaded.user.token_file == folder / "token"


def test_data_wins_over_a_file_and_base64_may_wrap(tmp_path: Path) -> None:
    encoded = base64.b64encode(CA).decode()
    wrapped = "\n".join(encoded[i : i + 20] for i in range(0, len(encoded), 20))

    def both(config: dict[str, Any]) -> None:
        cluster(config)["certificate-authority"] = "missing.crt"  # never read
        cluster(config)["certificate-authority-data"] = wrapped

    assert read_kubeconfig([write(tmp_path / "kc", edit(both))]).cluster.certificate_authority == CA


def test_merging_follows_kubectl_first_file_wins(tmp_path: Path) -> None:
    first = {
        "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": {"server": "https://first:1"}}],
        "users": [{"name": "shared", "user": {"token": "first"}}],
    }
    second = {
        "current-context": "ignored",
        "clusters": [
            {"name": "c", "cluster": {"server": "https://second:2"}},
            {"name": "only-second", "cluster": {"server": "https://second:3"}},
        ],
        "users": [{"name": "shared", "user": {"token": "second"}}],
        "contexts": [
            {"name": "ctx", "context": {"cluster": "c", "user": "shared"}},
            {"name": "ignored", "context": {"cluster": "only-second"}},
        ],
    }
    env = {
        "KUBECONFIG": ":".join(
            [
                str(write(tmp_path / "a" / "first", first)),
                str(tmp_path / "not-there"),  # skipped, as kubectl skips it
                str(write(tmp_path / "b" / "second", second)),
            ]
        )
    }
    paths = kubeconfig_paths(environ=env)
    assert paths == [tmp_path / "a" / "first", tmp_path / "b" / "second"]
    loaded = read_kubeconfig(paths)
    assert loaded.context == "ctx"  # current-context of the first file that sets one
    assert loaded.cluster.server == "https://first:1"  # the first file's cluster "c"
    assert loaded.user.token == "first"
    assert read_kubeconfig(paths, context="ignored").cluster.server == "https://second:3"


def test_default_path_is_home_kube_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ConfigError, match=r"\.kube/config: does not exist \(set KUBECONFIG"):
        kubeconfig_paths(environ={})
    write(tmp_path / ".kube" / "config", valid())
    assert kubeconfig_paths(environ={"KUBECONFIG": ""}) == [tmp_path / ".kube" / "config"]


def test_missing_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"kubeconfig .*/nope: does not exist$"):
        kubeconfig_paths(tmp_path / "nope")
    env = {"KUBECONFIG": f"{tmp_path / 'a'}:{tmp_path / 'b'}"}
    with pytest.raises(ConfigError, match=r"KUBECONFIG=.*/a:.*/b: none of its files exist"):
        kubeconfig_paths(environ=env)


def _ca_file_and_insecure(config: dict[str, Any]) -> None:
    cluster(config)["insecure-skip-tls-verify"] = True


def _client_pair(certificate: str | None, key: str | None) -> Callable[[dict[str, Any]], None]:
    def change(config: dict[str, Any]) -> None:
        body: dict[str, Any] = {}
        if certificate is not None:
            body["client-certificate-data"] = certificate
        if key is not None:
            body["client-key-data"] = key
        config["users"][0]["user"] = body

    return change


GOOD_B64 = base64.b64encode(b"x").decode()

# (id, the file's content, or a change to the valid config; context override; message regex)
MALFORMED: list[tuple[str, Any, str | None, str]] = [
    ("empty file", "", None, r"kc: empty \(no contexts, no current-context\)$"),
    ("only a comment", "# nothing\n", None, r"kc: empty"),
    (
        "not YAML",
        "clusters: [\n",
        None,
        r"kc: not YAML: line 2, column 1: (expected the|did not find expected) node",
    ),
    ("YAML is a string", "just words", None, r"kc: expected a mapping at the top, got a string"),
    ("YAML is a list", "- a\n- b\n", None, r"kc: expected a mapping at the top, got a list"),
    ("not UTF-8", b"\xff\xfe", None, r"kc: not UTF-8 text"),
    ("bad date", "when: 2001-02-30\n", None, r"kc: not YAML: day is out of range"),
    (
        "deep YAML",
        "[" * 5000 + "]" * 5000,
        None,
        r"kc: not YAML: (nested too deeply|.*exceeded maximum nesting depth)",
    ),
    (
        "missing current-context",
        edit(lambda c: c.pop("current-context")),
        None,
        r"kc: no current-context is set and no context given",
    ),
    (
        "current-context is a list",
        edit(lambda c: c.update({"current-context": ["main"]})),
        None,
        r"kc: current-context: expected a string",
    ),
    (
        "current-context names nothing",
        edit(lambda c: c.update({"current-context": "gone"})),
        None,
        r'kc: current-context "gone" names no context \(known: main, other\)',
    ),
    ("context not found", valid(), "nope", r'kc: context "nope" not found \(known: main, other\)'),
    (
        "clusters is a mapping",
        edit(lambda c: c.update({"clusters": {"c": {}}})),
        None,
        r"kc: clusters: expected a list, got a mapping",
    ),
    (
        "user entry is a string",
        edit(lambda c: c.update({"users": ["u"]})),
        None,
        r"kc: users\[0\]: expected a mapping, got a string$",
    ),
    (
        "context entry without name",
        edit(lambda c: c["contexts"][0].pop("name")),
        None,
        r"kc: contexts\[0\]\.name: missing$",
    ),
    (
        "context body is a list",
        edit(lambda c: c["contexts"][0].update({"context": ["c"]})),
        None,
        r'kc: contexts\[0\]\.context: expected a mapping, got a list \(context "main"\)$',
    ),
    (
        "context without cluster",
        edit(lambda c: context(c).pop("cluster")),
        None,
        r'kc: context "main": cluster: missing',
    ),
    (
        "cluster not found",
        edit(lambda c: context(c).update({"cluster": "c2"})),
        None,
        r'kc: context "main": cluster: cluster "c2" not found \(known: c\)',
    ),
    (
        "user not found",
        edit(lambda c: context(c).update({"user": "u2"})),
        None,
        r'kc: context "main": user: user "u2" not found \(known: u\)',
    ),
    (
        "cluster name is a number",
        edit(lambda c: c["clusters"][0].update({"name": 7})),
        None,
        r"kc: clusters\[0\]\.name: expected a string, got a number$",
    ),
    (
        "context name with a line break",
        edit(lambda c: c.update({"current-context": "a\nb"})),
        None,
        r'kc: current-context "a\\nb" names no context \(known: main, other\)$',
    ),
    (
        "no users at all",
        edit(lambda c: c.pop("users")),
        None,
        r'user "u" not found \(there are none\)',
    ),
    (
        "server missing",
        edit(lambda c: cluster(c).pop("server")),
        None,
        r'kc: cluster "c": server: missing',
    ),
    (
        "server not a URL",
        edit(lambda c: cluster(c).update({"server": "127.0.0.1:6443"})),
        None,
        r"kc: cluster \"c\": server: '127.0.0.1:6443' is not an http\(s\) URL with a host",
    ),
    (
        "server with a bad port",
        edit(lambda c: cluster(c).update({"server": "https://h:99999"})),
        None,
        r"server: 'https://h:99999' is not an http\(s\) URL",
    ),
    (
        "server is a number",
        edit(lambda c: cluster(c).update({"server": 6443})),
        None,
        r'cluster "c": server: expected a string, got a number',
    ),
    (
        "bad base64 CA",
        edit(lambda c: cluster(c).update({"certificate-authority-data": "!!not base64!!"})),
        None,
        r'kc: cluster "c": certificate-authority-data: not valid base64',
    ),
    (
        "missing CA file",
        edit(
            lambda c: (
                cluster(c).pop("certificate-authority-data"),
                cluster(c).update({"certificate-authority": "gone/ca.crt"}),
            )
        ),
        None,
        r'cluster "c": certificate-authority: cannot read .*/gone/ca.crt: No such file',
    ),
    (
        "NUL in a file name",
        edit(
            lambda c: (
                cluster(c).pop("certificate-authority-data"),
                cluster(c).update({"certificate-authority": "ca\x00.crt"}),
            )
        ),
        None,
        r"certificate-authority: '.*/ca\\x00.crt' is not a usable file name$",
    ),
    (
        "insecure is a string",
        edit(lambda c: cluster(c).update({"insecure-skip-tls-verify": "yes"})),
        None,
        r"insecure-skip-tls-verify: expected true or false, got a string",
    ),
    (
        "CA and insecure",
        edit(_ca_file_and_insecure),
        None,
        r"certificate-authority-data, insecure-skip-tls-verify: a CA and skipping TLS",
    ),
    (
        "socks proxy",
        edit(lambda c: cluster(c).update({"proxy-url": "socks5://p:1080"})),
        None,
        r"proxy-url: 'socks5://p:1080' is not an http\(s\) URL",
    ),
    (
        "bad base64 client key",
        edit(_client_pair(GOOD_B64, "%%%")),
        None,
        r'kc: user "u": client-key-data: not valid base64',
    ),
    (
        "certificate without key",
        edit(_client_pair(GOOD_B64, None)),
        None,
        r'user "u": client-certificate-data: needs client-key or client-key-data as well',
    ),
    (
        "key without certificate",
        edit(_client_pair(None, GOOD_B64)),
        None,
        r"client-key-data: needs client-certificate or client-certificate-data as well",
    ),
    (
        "missing client key file",
        edit(
            lambda c: c["users"][0].update(
                {"user": {"client-certificate-data": GOOD_B64, "client-key": "/gone/c.key"}}
            )
        ),
        None,
        r'user "u": client-key: cannot read /gone/c.key: No such file',
    ),
    (
        "token is a list",
        edit(lambda c: user(c).update({"token": ["abc"]})),
        None,
        r'user "u": token: expected a string, got a list',
    ),
    (
        "missing token file",
        edit(lambda c: c["users"][0].update({"user": {"tokenFile": "gone-token"}})),
        None,
        r'user "u": tokenFile: .*/gone-token does not exist',
    ),
    (
        "basic auth and token",
        edit(lambda c: user(c).update({"username": "me", "password": "pw"})),
        None,
        r'user "u": username, token: basic auth and a token are exclusive',
    ),
    (
        "password without username",
        edit(lambda c: c["users"][0].update({"user": {"password": "pw"}})),
        None,
        r'user "u": password: needs a username',
    ),
    (
        "exec is a list",
        edit(lambda c: c["users"][0].update({"user": {"exec": ["aws"]}})),
        None,
        r'user "u": exec: expected a mapping, got a list',
    ),
    (
        "exec and auth-provider",
        edit(
            lambda c: c["users"][0].update(
                {"user": {"exec": {"command": "x"}, "auth-provider": {"name": "oidc"}}}
            )
        ),
        None,
        r'user "u": exec, auth-provider: only one of them may be set',
    ),
    (
        "auth-provider without name",
        edit(lambda c: c["users"][0].update({"user": {"auth-provider": {"config": {}}}})),
        None,
        r'user "u": auth-provider.name: missing',
    ),
    (
        "impersonation",
        edit(lambda c: user(c).update({"as": "admin"})),
        None,
        r'user "u": as: impersonation is not supported by crdkit',
    ),
]


@pytest.mark.parametrize(
    ("content", "override", "message"),
    [
        pytest.param(content, override, message, id=name)
        for name, content, override, message in MALFORMED
    ],
)
def test_a_malformed_kubeconfig_is_one_config_error_naming_the_problem(
    tmp_path: Path, content: Any, override: str | None, message: str
) -> None:
    path = write(tmp_path / "kc", copy.deepcopy(content))
    with pytest.raises(ConfigError) as caught:
        read_kubeconfig(kubeconfig_paths(path), context=override)
    text = str(caught.value)
    assert text.startswith(f"kubeconfig {path}"), text
    assert "\n" not in text
    assert caught.match(message)


def test_a_folder_is_not_a_kubeconfig(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"kubeconfig .*: cannot read it: Is a directory"):
        read_kubeconfig(kubeconfig_paths(tmp_path))


def test_an_unused_entry_is_checked_for_shape_only(tmp_path: Path) -> None:
    def broken_unused(config: dict[str, Any]) -> None:
        config["clusters"].append({"name": "spare", "cluster": {"server": "not a url"}})

    assert read_kubeconfig([write(tmp_path / "kc", edit(broken_unused))]).cluster.name == "c"
