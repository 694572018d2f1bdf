"""Reading kubeconfig files as kubectl does, without kubernetes-asyncio.

What is read, and how:

- ``$KUBECONFIG`` may list several files (``:``-separated); they are merged as kubectl
  merges them: the first file to set ``current-context`` wins, and the first file to define a
  cluster, user or context of a given name wins that name. Listed files that do not exist are
  skipped; an explicitly given file must exist.
- The context is the given one, else ``current-context``. Its cluster must exist, and so
  must its user when it names one (a context without a user is anonymous).
- Cluster: ``server`` (an http(s) URL), ``certificate-authority(-data)``,
  ``insecure-skip-tls-verify``, ``tls-server-name``, ``proxy-url`` (http or https).
- User: ``client-certificate(-data)`` with ``client-key(-data)``, ``token``, ``tokenFile``,
  ``username``/``password``, ``exec`` (checked and run by :mod:`crdkit.client.exec_plugin`)
  and ``auth-provider`` (left to kubernetes-asyncio, imported only then).
- Relative file paths (and an exec ``command`` with a ``/``) are resolved against the folder
  of the file that defined the entry, as client-go does.

Only the selected context, cluster and user are checked field by field; every entry is
checked for shape. Every problem is one :class:`~crdkit.client.errors.ConfigError` whose
message names the file, the entry and the key, e.g.
``kubeconfig /home/me/.kube/config: user "admin": client-key-data: not valid base64``.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from crdkit._yaml import read_yaml_file
from crdkit.client.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "Kubeconfig",
    "KubeconfigCluster",
    "KubeconfigUser",
    "kubeconfig_paths",
    "read_kubeconfig",
]

# kubectl's impersonation keys: honouring them needs request headers crdkit does not send, and
# ignoring them would act as the kubeconfig's own user, with other rights than meant.
_IMPERSONATION = ("as", "as-uid", "as-groups", "as-user-extra")
_EXEC_EXTENSION = "client.authentication.k8s.io/exec"
_LIST_AT_MOST = 8
_V = TypeVar("_V")


@dataclass(frozen=True)
class KubeconfigCluster:
    """The selected cluster, with certificate files already read."""

    name: str
    where: str
    """``kubeconfig FILE: cluster "NAME"``, the prefix of every message about this entry."""
    server: str
    certificate_authority: bytes | None = None
    """The CA bundle (PEM or DER), from ``certificate-authority-data`` or the file."""
    certificate_authority_key: str = "certificate-authority-data"
    insecure_skip_tls_verify: bool = False
    tls_server_name: str | None = None
    proxy_url: str | None = None
    exec_extension: Any = None
    """``extensions[client.authentication.k8s.io/exec]``, passed to exec plugins that ask."""


@dataclass(frozen=True)
class KubeconfigUser:
    """The selected user's credentials, with certificate files already read."""

    name: str | None
    where: str
    folder: Path
    """The folder of the file that defined the user, for an exec plugin's relative command."""
    client_certificate: bytes | None = None
    client_key: bytes | None = None
    token: str | None = None
    token_file: Path | None = None
    username: str | None = None
    password: str | None = None
    exec: Mapping[str, Any] | None = None
    auth_provider: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Kubeconfig:
    """One context of a (merged) kubeconfig, resolved and checked."""

    files: tuple[Path, ...]
    context: str
    cluster: KubeconfigCluster
    user: KubeconfigUser
    namespace: str | None = None


@dataclass
class _Entry:
    """A named cluster, user or context, and the file that defined it."""

    kind: str
    name: str
    body: dict[str, Any]
    file: Path

    @property
    def where(self) -> str:
        return f"kubeconfig {self.file}: {self.kind} {_quote(self.name)}"

    def fail(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.where}: {key}: {problem}")

    def _typed(self, key: str, kind: type[_V], expected: str) -> _V | None:
        """``body[key]`` if it is a ``kind``, ``None`` if it is absent, else the error that
        names the file, the entry and the key: ``string``, ``flag`` and ``mapping`` differ
        only in the type they want and what they do with an absent value."""
        value = self.body.get(key)
        if value is None:
            return None
        if not isinstance(value, kind):
            raise self.fail(key, f"expected {expected}, got {_kind(value)}")
        return value

    def string(self, key: str) -> str | None:
        return self._typed(key, str, "a string") or None  # "" is as good as absent

    def flag(self, key: str) -> bool:
        return self._typed(key, bool, "true or false") or False

    def mapping(self, key: str) -> dict[str, Any] | None:
        return self._typed(key, dict, "a mapping")

    def path(self, key: str) -> Path | None:
        value = self.string(key)
        return None if value is None else self.file.parent / value  # absolute stays absolute

    def data_or_file(self, key: str) -> tuple[bytes | None, str]:
        """The bytes of ``KEY-data`` (base64) or else of the file ``KEY``, and which key."""
        data_key = f"{key}-data"
        data = self.string(data_key)
        if data is not None:
            # Go's decoder skips line breaks; anything else that is not base64 is refused.
            compact = data.replace("\n", "").replace("\r", "")
            try:
                return base64.b64decode(compact, validate=True), data_key
            except (binascii.Error, ValueError):
                raise self.fail(data_key, "not valid base64") from None
        path = self.path(key)
        if path is None:
            return None, key
        try:
            return path.read_bytes(), key
        except OSError as err:
            raise self.fail(key, f"cannot read {path}: {err.strerror or err}") from None
        except ValueError:  # a NUL in the path: no file can have that name
            raise self.fail(key, f"{str(path)!r} is not a usable file name") from None


@dataclass
class _Merged:
    files: list[Path] = field(default_factory=list)
    current_context: tuple[str, Path] | None = None
    entries: dict[str, dict[str, _Entry]] = field(
        default_factory=lambda: {"cluster": {}, "user": {}, "context": {}}
    )
    empty: bool = True


def kubeconfig_paths(
    path: str | Path | Sequence[str | Path] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> list[Path]:
    """The files to merge: the given one(s), else ``$KUBECONFIG``'s, else ``~/.kube/config``.

    Given files must exist; files listed in ``$KUBECONFIG`` that do not exist are skipped, as
    kubectl skips them, but at least one must.
    """
    env = os.environ if environ is None else environ
    if path is not None:
        given = [path] if isinstance(path, str | Path) else list(path)
        paths = [Path(p).absolute() for p in given]
        for candidate in paths:
            if not candidate.exists():
                raise ConfigError(f"kubeconfig {candidate}: does not exist")
        if not paths:
            raise ConfigError("kubeconfig: no file given")
        return paths
    listed = env.get("KUBECONFIG", "")
    if listed:
        paths = []
        for part in filter(None, listed.split(os.pathsep)):
            candidate = Path(part).absolute()
            if candidate not in paths and candidate.exists():
                paths.append(candidate)
        if not paths:
            raise ConfigError(f"KUBECONFIG={listed}: none of its files exist")
        return paths
    default = Path.home() / ".kube" / "config"
    if not default.exists():
        raise ConfigError(
            f"kubeconfig {default}: does not exist (set KUBECONFIG or give a kubeconfig file)"
        )
    return [default]


def read_kubeconfig(paths: Sequence[Path], *, context: str | None = None) -> Kubeconfig:
    """Merge ``paths`` (see :func:`kubeconfig_paths`) and resolve ``context`` (default: the
    current context) into its cluster and user, checking everything that will be used."""
    merged = _Merged()
    for path in paths:
        _merge(merged, path, _load_file(path))
    files = ", ".join(str(p) for p in merged.files)
    context_entry = _select_context(merged, context, files)
    cluster_name = context_entry.string("cluster")
    if cluster_name is None:
        raise context_entry.fail("cluster", "missing")
    cluster_entry = _lookup(merged, "cluster", cluster_name, context_entry)
    user_name = context_entry.string("user")
    user_entry = None if user_name is None else _lookup(merged, "user", user_name, context_entry)
    return Kubeconfig(
        files=tuple(merged.files),
        context=context_entry.name,
        cluster=_cluster(cluster_entry),
        user=_user(user_entry, context_entry),
        namespace=context_entry.string("namespace"),
    )


# -- reading and merging files ----------------------------------------------------------------


def _load_file(path: Path) -> dict[str, Any] | None:
    where = f"kubeconfig {path}"
    document = read_yaml_file(path, where, ConfigError)
    if document is None:
        return None  # an empty file is an empty config, as for kubectl
    if not isinstance(document, dict):
        raise ConfigError(f"{where}: expected a mapping at the top, got {_kind(document)}")
    return document


def _merge(merged: _Merged, path: Path, document: dict[str, Any] | None) -> None:
    merged.files.append(path)
    if document is None:
        return
    merged.empty = merged.empty and not document
    current = document.get("current-context")
    if current is not None and not isinstance(current, str):
        raise ConfigError(f"kubeconfig {path}: current-context: expected a string")
    if current and merged.current_context is None:
        merged.current_context = (current, path)
    for kind in ("cluster", "user", "context"):
        section = f"{kind}s"
        items = document.get(section)
        if items is None:
            continue
        if not isinstance(items, list):
            raise ConfigError(f"kubeconfig {path}: {section}: expected a list, got {_kind(items)}")
        for index, item in enumerate(items):
            where = f"kubeconfig {path}: {section}[{index}]"
            if not isinstance(item, dict):
                raise ConfigError(f"{where}: expected a mapping, got {_kind(item)}")
            name, body = item.get("name"), item.get(kind)
            if not isinstance(name, str) or not name:
                got = "missing" if name in (None, "") else f"expected a string, got {_kind(name)}"
                raise ConfigError(f"{where}.name: {got}")
            if not isinstance(body, dict | None):
                raise ConfigError(
                    f"{where}.{kind}: expected a mapping, got {_kind(body)} ({kind} {_quote(name)})"
                )
            # The first file (and within it the first entry) to define a name wins it.
            merged.entries[kind].setdefault(name, _Entry(kind, name, body or {}, path))


def _select_context(merged: _Merged, override: str | None, files: str) -> _Entry:
    contexts = merged.entries["context"]
    if override is not None:
        found = contexts.get(override)
        if found is None:
            known = _known(contexts)
            raise ConfigError(f"kubeconfig {files}: context {_quote(override)} not found{known}")
        return found
    if merged.current_context is None:
        if merged.empty:
            raise ConfigError(f"kubeconfig {files}: empty (no contexts, no current-context)")
        raise ConfigError(f"kubeconfig {files}: no current-context is set and no context given")
    name, source = merged.current_context
    found = contexts.get(name)
    if found is None:
        raise ConfigError(
            f"kubeconfig {source}: current-context {_quote(name)} names no context"
            + _known(contexts)
        )
    return found


def _lookup(merged: _Merged, kind: str, name: str, context: _Entry) -> _Entry:
    entries = merged.entries[kind]
    found = entries.get(name)
    if found is None:
        raise context.fail(kind, f"{kind} {_quote(name)} not found{_known(entries)}")
    return found


# -- the selected entries ---------------------------------------------------------------------


def _cluster(entry: _Entry) -> KubeconfigCluster:
    server = entry.string("server")
    if server is None:
        raise entry.fail("server", "missing")
    _check_url(entry, "server", server)
    proxy = entry.string("proxy-url")
    if proxy is not None:
        _check_url(entry, "proxy-url", proxy)
    ca, ca_key = entry.data_or_file("certificate-authority")
    insecure = entry.flag("insecure-skip-tls-verify")
    if insecure and ca is not None:
        # kubectl refuses this pair too: trusting a CA and trusting anything contradict.
        raise entry.fail(
            f"{ca_key}, insecure-skip-tls-verify", "a CA and skipping TLS verification conflict"
        )
    return KubeconfigCluster(
        name=entry.name,
        where=entry.where,
        server=server,
        certificate_authority=ca,
        certificate_authority_key=ca_key,
        insecure_skip_tls_verify=insecure,
        tls_server_name=entry.string("tls-server-name"),
        proxy_url=proxy,
        exec_extension=_exec_extension(entry),
    )


def _check_url(entry: _Entry, key: str, url: str) -> None:
    try:
        parts = urlsplit(url)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        parts, port_ok = None, False
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise entry.fail(key, f"{url!r} is not an http(s) URL with a host")


def _exec_extension(entry: _Entry) -> Any:
    extensions = entry.body.get("extensions")
    if not isinstance(extensions, list):
        return None
    for item in extensions:
        if isinstance(item, dict) and item.get("name") == _EXEC_EXTENSION:
            return item.get("extension")
    return None


def _user(entry: _Entry | None, context: _Entry) -> KubeconfigUser:
    if entry is None:
        return KubeconfigUser(name=None, where=context.where, folder=context.file.parent)
    for impersonation in _IMPERSONATION:
        if entry.body.get(impersonation):
            raise entry.fail(impersonation, "impersonation is not supported by crdkit")
    certificate, certificate_key = entry.data_or_file("client-certificate")
    key, key_key = entry.data_or_file("client-key")
    if (certificate is None) != (key is None):
        present, absent = (
            (certificate_key, "client-key") if key is None else (key_key, "client-certificate")
        )
        raise entry.fail(present, f"needs {absent} or {absent}-data as well")
    token, token_file = entry.string("token"), entry.path("tokenFile")
    username, password = entry.string("username"), entry.body.get("password")
    if password is not None and not isinstance(password, str):
        raise entry.fail("password", f"expected a string, got {_kind(password)}")
    if password and username is None:
        raise entry.fail("password", "needs a username")
    if username is not None and (token is not None or token_file is not None):
        raise entry.fail("username, token", "basic auth and a token are exclusive; keep one")
    if token is None and token_file is not None and not token_file.is_file():
        raise entry.fail("tokenFile", f"{token_file} does not exist or is not a file")
    exec_config, auth_provider = entry.mapping("exec"), entry.mapping("auth-provider")
    if exec_config is not None and auth_provider is not None:
        raise entry.fail("exec, auth-provider", "only one of them may be set")
    if auth_provider is not None and not isinstance(auth_provider.get("name"), str):
        raise entry.fail("auth-provider.name", "missing")
    return KubeconfigUser(
        name=entry.name,
        where=entry.where,
        folder=entry.file.parent,
        client_certificate=certificate,
        client_key=key,
        token=token,
        token_file=token_file,
        username=username,
        password=password if username is not None else None,
        exec=exec_config,
        auth_provider=auth_provider,
    )


def _known(entries: Mapping[str, _Entry]) -> str:
    if not entries:
        return " (there are none)"
    names = [_quote(name, bare=True) for name in sorted(entries)]
    shown = ", ".join(names[:_LIST_AT_MOST]) + (", ..." if len(names) > _LIST_AT_MOST else "")
    return f" (known: {shown})"


def _quote(name: str, *, bare: bool = False) -> str:
    """A name as messages show it: quoted (bare in lists when plain), escaped, not too long."""
    if len(name) > 80:
        name = f"{name[:80]}..."
    plain = name.isprintable() and not any(c in name for c in ' ,"')
    return name if bare and plain else json.dumps(name, ensure_ascii=False)


def _kind(value: object) -> str:
    names = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "nothing"
    return names.get(type(value)) or ("a number" if isinstance(value, int | float) else "a value")
