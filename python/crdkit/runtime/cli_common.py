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
from crdkit.runtime.event_loop import EVENT_LOOPS
from crdkit.runtime.event_loop import run as run_on_loop
from crdkit.runtime.leader import LeaderElectionLost
from crdkit.runtime.manager import CacheSyncTimeout
from crdkit.runtime.manager_options import Flag, option_fields

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from crdkit.client import Client
    from crdkit.runtime.manager import Manager

__all__ = ["connection_options", "fail", "flag_option", "manager_options", "run_manager"]

F = TypeVar("F", bound="Callable[..., Any]")


def connection_options(command: F) -> F:
    """``--kubeconfig``, ``--context``, ``--exec-timeout`` and ``--event-loop``."""
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
            click.option(
                "--event-loop",
                type=click.Choice(EVENT_LOOPS),
                default="auto",
                show_default=True,
                help="The event loop to run on: uvloop (crdkit[fast]) or asyncio's own; auto: "
                "uvloop when installed and no webhooks are served, else asyncio.",
            ),
        ]
    ):
        command = option(command)
    return command


def flag_option(flag: Flag, default: Any) -> Callable[[F], F]:
    """One option's click spelling, from its :class:`Flag` (``crdkit run``'s and ``crdkit
    scheduler``'s options are all spelled by it)."""
    names = [flag.name] if flag.short is None else [flag.name, flag.short]
    # A flag spelled unlike its option (a port for an address) has no default of its own: left
    # out, the option keeps its default (ManagerOptions.from_flags skips None).
    settings: dict[str, Any] = {
        "help": flag.help,
        "default": None if flag.to_option is not None else default,
    }
    if flag.show_default:
        settings["show_default"] = True
    if flag.choices is not None:
        settings["type"] = click.Choice(flag.choices)
    if flag.type == "switch":
        settings["is_flag"] = True
    elif flag.type == "on-off":
        names = [f"{flag.name}/--no-{flag.name.removeprefix('--')}"]
        settings["show_default"] = True
    elif flag.type == "seconds":
        settings["type"] = click.FloatRange(min=0, min_open=not flag.zero_allowed)
    elif flag.type == "count":
        settings["type"] = click.IntRange(min=1)
    elif flag.type == "whole":
        settings["type"] = click.IntRange(min=0)
    elif flag.type == "port":
        settings["type"] = click.IntRange(1, 65535)
    elif flag.type == "directory":
        # Not checked for existence here: the manager's error names the directory.
        settings["type"] = click.Path(file_okay=False, path_type=Path)
    option: Callable[[F], F] = click.option(*names, flag.parameter, **settings)
    return option


def manager_options(*, controllers: bool = True) -> Callable[[F], F]:
    """The flags of every :class:`ManagerOptions` field that has one (with ``controllers``
    also those only commands that run reconcilers have), and ``--log-level``/``--log-format``.

    The command reads them back with ``ManagerOptions.from_flags``."""

    def decorate(command: F) -> F:
        chosen = [
            field
            for field in option_fields()
            if field.flag is not None and (controllers or not field.flag.controllers_only)
        ]
        options = [flag_option(f.flag, f.default) for f in chosen if f.flag is not None]
        options += [
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
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


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
        loop = type(asyncio.get_running_loop())
        if loop.__module__.startswith("uvloop") and (manager.webhooks or manager.conversions):
            # Measured: under uvloop the webhook server's TLS upgrade of an accepted connection
            # never answers kube-apiserver (the call times out), though the client's calls pass.
            raise ValueError(
                "--event-loop uvloop: the webhook server needs asyncio's own loop "
                "(--event-loop asyncio, or auto, the default, which picks it for webhooks)"
            )
        manager.install_signal_handlers()
        # Said once the configuration is known to be good: a bad one is one line on its own.
        logging.getLogger("crdkit.runtime").info(
            "event loop: %s.%s", loop.__module__, loop.__name__
        )
        await manager.run()


def run_manager(
    command: str,
    kubeconfig: Path | None,
    connection: dict[str, Any],
    build: Callable[[Client], Awaitable[Manager]],
    *,
    event_loop: str = "auto",
    serves_webhooks: bool = False,
) -> None:
    """Connect, ``build`` the Manager on the client, and run it until SIGTERM or SIGINT, on
    the event loop ``event_loop`` names (`crdkit.runtime.event_loop`; ``serves_webhooks``
    makes ``auto`` pick asyncio's own)."""
    log = logging.getLogger(f"crdkit.{command}")
    try:
        run_on_loop(
            _serve(kubeconfig, connection, build), event_loop, serves_webhooks=serves_webhooks
        )
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
