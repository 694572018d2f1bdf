"""What the commands that run a Manager share (``crdkit run``, ``crdkit scheduler``): the
connection and manager options, and the run itself with its one-line errors.

A failure a user can fix (a kubeconfig problem, caches that never sync because the role lacks
list or watch, a bad option) ends the command with one line on stderr naming the command, not
a traceback; a lost Lease exits 1 after logging it, as a controller-runtime manager does.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from crdkit.client.errors import ConfigError
from crdkit.client.exec_plugin import DEFAULT_EXEC_TIMEOUT
from crdkit.runtime.leader import LeaderElectionLost
from crdkit.runtime.manager import CacheSyncTimeout

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from crdkit.client import Client
    from crdkit.runtime.manager import Manager

__all__ = ["connection_options", "fail", "manager_options", "run_manager"]

F = TypeVar("F", bound="Callable[..., Any]")


def connection_options(command: F) -> F:
    """``--kubeconfig``, ``--context`` and ``--exec-timeout``."""
    for option in reversed(
        [
            click.option(
                "--kubeconfig",
                # Not checked by click: the loader's one-line message names the file and what
                # is wrong with it.
                type=click.Path(path_type=Path),
                default=None,
                help="Kubeconfig file (default: in-cluster config, else $KUBECONFIG or "
                "~/.kube/config).",
            ),
            click.option(
                "--context", default=None, help="Kubeconfig context (default: the current one)."
            ),
            click.option(
                "--exec-timeout",
                type=click.FloatRange(min=0, min_open=True),
                default=DEFAULT_EXEC_TIMEOUT,
                show_default=True,
                help="Seconds an exec credential plugin (or auth provider) may take to give a "
                "token.",
            ),
        ]
    ):
        command = option(command)
    return command


def manager_options(command: F) -> F:
    """Leader election, the metrics and probe addresses, the cache sync timeout, logging."""
    for option in reversed(
        [
            click.option("--leader-elect", is_flag=True, help="Run only while holding a Lease."),
            click.option("--leader-election-id", default=None, help="Name of the Lease."),
            click.option(
                "--leader-election-namespace",
                default=None,
                help="Namespace of the Lease (default: own).",
            ),
            click.option(
                "--metrics-bind-address",
                default=None,
                help="Address of /metrics; '0' turns it off (default: 127.0.0.1:8080, loopback "
                "only; :8443 with --metrics-secure). Plain HTTP on another interface is open to "
                "anyone who reaches it: a warning says so.",
            ),
            click.option(
                "--metrics-secure/--no-metrics-secure",
                default=False,
                show_default=True,
                help="Serve /metrics over HTTPS to bearer tokens RBAC allows 'get /metrics' "
                "(checked with TokenReview and SubjectAccessReview).",
            ),
            click.option(
                "--metrics-cert-dir",
                type=click.Path(file_okay=False, exists=True, path_type=Path),
                default=None,
                help="tls.crt and tls.key for --metrics-secure, reloaded when renewed "
                "(default: a self-signed pair).",
            ),
            click.option(
                "--health-probe-bind-address",
                default=":8081",
                show_default=True,
                help="Address of /healthz and /readyz; '0' turns it off.",
            ),
            click.option(
                "--cache-sync-timeout",
                type=click.FloatRange(min=0, min_open=True),
                default=120.0,
                show_default=True,
                help="Seconds the caches may take to list everything before giving up (a role "
                "that lacks list or watch is the usual reason: see crdkit gen-rbac --check).",
            ),
            click.option(
                "--log-level",
                type=click.Choice(["debug", "info", "warning", "error"]),
                default="info",
                show_default=True,
            ),
            click.option(
                "--log-format",
                type=click.Choice(["json", "text"]),
                default="json",
                show_default=True,
            ),
        ]
    ):
        command = option(command)
    return command


def fail(command: str, message: str, status: int = 2) -> NoReturn:
    """One line on stderr, whatever the log format: this is for the person at the terminal."""
    click.echo(f"crdkit {command}: {' '.join(message.split())}", err=True)
    sys.exit(status)


async def _serve(
    kubeconfig: Path | None,
    connection: dict[str, Any],
    build: Callable[[Client], Awaitable[Manager]],
) -> None:
    from crdkit.client import Client, ClientConfig

    if kubeconfig is None:
        config = await ClientConfig.load(**connection)
    else:
        config = await ClientConfig.from_kubeconfig(kubeconfig, **connection)
    # Fetch the first credential now: an exec plugin that fails or hangs is a configuration
    # problem to report in one line before anything starts, not a retry loop in the logs.
    await config.credentials.authorization()
    async with Client(config) as client:
        manager = await build(client)
        manager.install_signal_handlers()
        await manager.run()


def run_manager(
    command: str,
    kubeconfig: Path | None,
    connection: dict[str, Any],
    build: Callable[[Client], Awaitable[Manager]],
) -> None:
    """Connect, ``build`` the Manager on the client, and run it until SIGTERM or SIGINT."""
    log = logging.getLogger(f"crdkit.{command}")
    try:
        asyncio.run(_serve(kubeconfig, connection, build))
    except CacheSyncTimeout as error:
        if error.connection_problem is not None:
            hint = "check the server address of the kubeconfig context and that the apiserver runs"
        else:
            hint = "check the operator's role (crdkit gen-rbac ... --check ROLE.yaml)"
        fail(command, f"{error}; {hint}", 1)
    except LeaderElectionLost as error:
        log.error("leader election lost, exiting: %s", error)
        sys.exit(1)
    except ConfigError as error:
        fail(command, str(error))
    except ValueError as error:
        raise click.UsageError(str(error)) from None
