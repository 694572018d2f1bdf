"""Exec credential plugins (a kubeconfig's ``users[].user.exec``), run with a timeout.

A plugin (``aws eks get-token``, ``gke-gcloud-auth-plugin``, ``kubelogin``) is a program that
prints an ``ExecCredential`` with a token. crdkit runs it itself, following client-go's
contract (``KUBERNETES_EXEC_INFO``, ``interactiveMode``, ``provideClusterInfo``,
``installHint``), because a plugin that never answers must not hang an operator silently: each
run is limited to ``timeout`` seconds (30 by default), after which the plugin and its children
are killed and a :class:`~crdkit.client.errors.ConfigError` says so. Tokens are cached until
``expirationTimestamp`` minus ``refresh_margin`` seconds, or until the server refuses one.
Plugins that answer with a client certificate instead of a token are refused clearly.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from crdkit.client.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = ["API_VERSIONS", "DEFAULT_EXEC_TIMEOUT", "ExecCredentials"]

DEFAULT_EXEC_TIMEOUT = 30.0
"""Seconds an exec credential plugin may take before it is killed."""

API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
_MODES = ("Never", "IfAvailable", "Always")


class ExecCredentials:
    """A token from an exec plugin, re-run when it expires or is refused.

    ``exec_config`` is the kubeconfig's ``exec`` mapping; it is checked here, so a bad one
    fails at load time. ``where`` prefixes every message (the loader passes
    ``kubeconfig FILE: user "NAME"``), ``folder`` resolves a relative command that has a
    ``/``, and ``cluster`` is what a plugin with ``provideClusterInfo`` receives.
    """

    def __init__(
        self,
        exec_config: Mapping[str, Any],
        *,
        timeout: float = DEFAULT_EXEC_TIMEOUT,
        refresh_margin: float = 30.0,
        where: str = "users[].user",
        folder: Path | None = None,
        cluster: Mapping[str, Any] | None = None,
    ) -> None:
        if not timeout > 0:
            raise ValueError(f"exec plugin timeout must be positive, got {timeout!r}")
        self._where = where
        self.api_version = self._choice(exec_config, "apiVersion", API_VERSIONS)
        command = exec_config.get("command")
        if not isinstance(command, str) or not command:
            raise self._error("command", "missing" if command is None else "expected a string")
        self.command = command
        if os.sep in command and not os.path.isabs(command) and folder is not None:
            command = str(folder / command)  # client-go: relative to the kubeconfig's folder
        self.argv = [command, *self._strings(exec_config, "args")]
        self.env = self._env(exec_config)
        # v1 made interactiveMode required; v1beta1 defaulted it to IfAvailable.
        v1 = self.api_version.endswith("/v1")
        self.interactive_mode = self._choice(
            exec_config, "interactiveMode", _MODES, default=None if v1 else "IfAvailable"
        )
        hint = exec_config.get("installHint")
        self.install_hint = " ".join(hint.split()) if isinstance(hint, str) else ""
        provide = exec_config.get("provideClusterInfo", False)
        if not isinstance(provide, bool):
            raise self._error("provideClusterInfo", "expected true or false")
        self.cluster = dict(cluster or {}) if provide else None
        self.timeout = timeout
        self.refresh_margin = refresh_margin
        self._token: str | None = None
        self._expires_at: datetime | None = None
        self._lock = asyncio.Lock()

    # -- checking the kubeconfig entry ----------------------------------------------------

    def _error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self._where}: exec.{key}: {problem}")

    def _choice(
        self,
        config: Mapping[str, Any],
        key: str,
        allowed: tuple[str, ...],
        *,
        default: str | None = None,
    ) -> str:
        value = config.get(key)
        if value is None and default is not None:
            return default
        if value not in allowed:
            shown = "missing" if value is None else f"{value!r} is not supported"
            raise self._error(key, f"{shown} (one of: {', '.join(allowed)})")
        return str(value)

    def _strings(self, config: Mapping[str, Any], key: str) -> list[str]:
        value = config.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._error(key, "expected a list of strings")
        return list(value)

    def _env(self, config: Mapping[str, Any]) -> dict[str, str]:
        value = config.get("env")
        if value is None:
            return {}
        if not isinstance(value, list):
            raise self._error("env", "expected a list of name/value mappings")
        env: dict[str, str] = {}
        for index, item in enumerate(value):
            name = item.get("name") if isinstance(item, dict) else None
            text = item.get("value") if isinstance(item, dict) else None
            if not isinstance(name, str) or not name or not isinstance(text, str):
                raise self._error(f"env[{index}]", "expected a mapping with name and value strings")
            env[name] = text
        return env

    # -- Credentials ----------------------------------------------------------------------

    def _fresh(self) -> bool:
        if self._token is None:
            return False
        if self._expires_at is None:
            return True
        remaining = (self._expires_at - datetime.now(UTC)).total_seconds()
        return remaining > self.refresh_margin

    async def authorization(self) -> str | None:
        if self._fresh():
            return f"Bearer {self._token}"
        async with self._lock:  # concurrent requests share one plugin run
            if not self._fresh():
                await self._run()
        return f"Bearer {self._token}"

    def invalidate(self) -> None:
        self._token = None
        self._expires_at = None

    # -- running the plugin ---------------------------------------------------------------

    def _describe(self) -> str:
        return f"{self._where}: exec plugin {self.command!r}"

    async def _run(self) -> None:
        interactive = self.interactive_mode != "Never" and sys.stdin.isatty()
        if self.interactive_mode == "Always" and not interactive:
            raise ConfigError(f"{self._describe()}: interactiveMode Always needs a terminal")
        spec: dict[str, Any] = {"interactive": interactive}
        if self.cluster is not None:
            spec["cluster"] = self.cluster
        info = {"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec}
        env = {**os.environ, **self.env, "KUBERNETES_EXEC_INFO": json.dumps(info)}
        try:
            process = await asyncio.create_subprocess_exec(
                *self.argv,
                env=env,
                stdin=None if interactive else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                # An interactive plugin prompts on stderr: leave it on the terminal.
                stderr=None if interactive else asyncio.subprocess.PIPE,
                # Its own process group, so a timeout kills what it started too; an
                # interactive one keeps the terminal's session to be able to prompt.
                start_new_session=not interactive,
            )
        except FileNotFoundError:
            hint = f" ({self.install_hint})" if self.install_hint else ""
            raise ConfigError(f"{self._describe()}: command not found{hint}") from None
        except OSError as err:
            raise ConfigError(f"{self._describe()}: cannot run: {err.strerror or err}") from None
        except ValueError as err:  # a NUL in the command, an argument or the environment
            raise ConfigError(f"{self._describe()}: cannot run: {err}") from None
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(), self.timeout)
        except TimeoutError:
            await _kill(process, group=not interactive)
            raise ConfigError(
                f"{self._describe()}: no answer after {self.timeout:g} s, killed "
                "(the limit is the exec timeout, e.g. crdkit run --exec-timeout)"
            ) from None
        except BaseException:
            await _kill(process, group=not interactive)
            raise
        if process.returncode != 0:
            said = _last_line(stderr)
            raise ConfigError(
                f"{self._describe()}: exited with status {process.returncode}"
                + (f": {said}" if said else "")
            )
        self._accept(stdout)

    def _accept(self, stdout: bytes) -> None:
        try:
            response = json.loads(stdout)
        except (ValueError, RecursionError):
            raise ConfigError(f"{self._describe()}: printed no ExecCredential JSON") from None
        if not isinstance(response, dict) or response.get("kind") != "ExecCredential":
            raise ConfigError(f"{self._describe()}: printed something else than an ExecCredential")
        if response.get("apiVersion") != self.api_version:
            raise ConfigError(
                f"{self._describe()}: answered apiVersion {response.get('apiVersion')!r}, "
                f"the kubeconfig asks for {self.api_version!r}"
            )
        status = response.get("status")
        token = status.get("token") if isinstance(status, dict) else None
        if not isinstance(token, str) or not token:
            if isinstance(status, dict) and status.get("clientCertificateData"):
                raise ConfigError(
                    f"{self._describe()}: answered with a client certificate; crdkit takes "
                    "only tokens from exec plugins"
                )
            raise ConfigError(f"{self._describe()}: answered without status.token")
        expiry = status.get("expirationTimestamp") if isinstance(status, dict) else None
        self._expires_at = None if expiry is None else self._parse_time(expiry)
        self._token = token

    def _parse_time(self, value: object) -> datetime:
        try:
            parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            raise ConfigError(
                f"{self._describe()}: bad status.expirationTimestamp {value!r}"
            ) from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


async def _kill(process: asyncio.subprocess.Process, *, group: bool) -> None:
    # The group even when the plugin itself is gone: a child it left may hold the pipe open.
    try:
        if group:
            os.killpg(process.pid, signal.SIGKILL)
        elif process.returncode is None:
            process.kill()
    except ProcessLookupError:
        pass  # everything ended on its own meanwhile
    await process.wait()


def _last_line(stderr: bytes | None) -> str:
    lines = [line.strip() for line in (stderr or b"").decode(errors="replace").splitlines()]
    said = next((line for line in reversed(lines) if line), "")
    return said if len(said) <= 200 else f"{said[:200]}..."
