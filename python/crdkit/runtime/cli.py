"""``crdkit run``: run reconcilers until SIGTERM or SIGINT (``gen-rbac`` is in ``rbac_cli``).

::

    crdkit run examples.hello.operator:HelloReconciler --namespace demo --leader-elect
    crdkit run sched:GangReconciler --option zones=a,b --config sched.yaml

``--option`` and ``--config`` become constructor arguments of the reconciler classes
(``runtime.options``). Exit status 2 for bad arguments, 1 when the operator stops on an error
(caches that never sync, a lost lease), each told in one line.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from crdkit.client.errors import ConfigError
from crdkit.client.exec_plugin import DEFAULT_EXEC_TIMEOUT
from crdkit.runtime.leader import LeaderElectionLost
from crdkit.runtime.loader import load_reconciler_classes
from crdkit.runtime.logs import configure_logging
from crdkit.runtime.manager import CacheSyncTimeout, Manager
from crdkit.runtime.options import OptionError, build_reconcilers

if TYPE_CHECKING:
    from collections.abc import Sequence

    from crdkit.runtime.reconciler import Reconciler

__all__ = ["run"]

log = logging.getLogger("crdkit.run")


async def _run(
    reconcilers: Sequence[Reconciler[Any]],
    kubeconfig: Path | None,
    connection: dict[str, Any],
    options: dict[str, Any],
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
        manager = Manager(client, **options)
        for reconciler in reconcilers:
            manager.add(reconciler)
        manager.install_signal_handlers()
        await manager.run()


def _fail(message: str, status: int = 2) -> NoReturn:
    # One line on stderr, whatever the log format: this is for the person at the terminal.
    click.echo(f"crdkit run: {' '.join(message.split())}", err=True)
    sys.exit(status)


@click.command("run")
@click.argument("reconcilers", nargs=-1, required=True, metavar="MODULE:CLASS...")
@click.option(
    "--option",
    "reconciler_options",
    multiple=True,
    metavar="[CLASS.]KEY=VALUE",
    help="A constructor argument of the reconciler classes, converted by its annotation (str, "
    "int, float, bool as true/false/yes/no/1/0, list[str] comma-separated, or Optional of "
    "these); repeatable. CLASS.KEY=VALUE gives it to one class only; an unqualified KEY goes "
    "to every class that takes it. Dashes in KEY read as underscores. Overrides --config.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="A YAML or JSON mapping of the same KEYs (or CLASS.KEY, or a CLASS: section) to "
    "values, for the reconcilers' constructors.",
)
@click.option("--namespace", "-n", default=None, help="Watch only this namespace (default: all).")
@click.option(
    "--kubeconfig",
    # Not checked by click: the loader's one-line message names the file and what is wrong.
    type=click.Path(path_type=Path),
    default=None,
    help="Kubeconfig file (default: in-cluster config, else $KUBECONFIG or ~/.kube/config).",
)
@click.option("--context", default=None, help="Kubeconfig context (default: the current one).")
@click.option(
    "--exec-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_EXEC_TIMEOUT,
    show_default=True,
    help="Seconds an exec credential plugin (or auth provider) may take to give a token.",
)
@click.option("--leader-elect", is_flag=True, help="Run controllers only while holding a Lease.")
@click.option("--leader-election-id", default=None, help="Name of the Lease.")
@click.option(
    "--leader-election-namespace", default=None, help="Namespace of the Lease (default: own)."
)
@click.option(
    "--metrics-bind-address",
    default=":8080",
    show_default=True,
    help="Address of /metrics; '0' turns it off.",
)
@click.option(
    "--health-probe-bind-address",
    default=":8081",
    show_default=True,
    help="Address of /healthz and /readyz; '0' turns it off.",
)
@click.option(
    "--max-concurrent-reconciles",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Workers per controller (unless the reconciler sets its own).",
)
@click.option(
    "--graceful-shutdown-timeout",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    help="Seconds in-flight reconciles get to finish on SIGTERM/SIGINT.",
)
@click.option(
    "--cache-sync-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=120.0,
    show_default=True,
    help="Seconds the caches may take to list everything before crdkit run gives up (a role "
    "that lacks list or watch is the usual reason: see crdkit gen-rbac --check).",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="info",
    show_default=True,
)
@click.option(
    "--log-format", type=click.Choice(["json", "text"]), default="json", show_default=True
)
def run(
    reconcilers: tuple[str, ...],
    reconciler_options: tuple[str, ...],
    config_file: Path | None,
    namespace: str | None,
    kubeconfig: Path | None,
    context: str | None,
    exec_timeout: float,
    leader_elect: bool,
    leader_election_id: str | None,
    leader_election_namespace: str | None,
    metrics_bind_address: str,
    health_probe_bind_address: str,
    max_concurrent_reconciles: int,
    graceful_shutdown_timeout: float,
    cache_sync_timeout: float,
    log_level: str,
    log_format: str,
) -> None:
    """Run reconcilers (``package.module:ReconcilerClass``) until SIGTERM or SIGINT.

    Each class is built with the --option and --config values its constructor takes, e.g.
    ``crdkit run sched:Gang --option zones=a,b --option Gang.dry-run=yes --config gang.yaml``.
    """
    configure_logging(log_level, log_format)
    classes = load_reconciler_classes(reconcilers)
    try:
        built = build_reconcilers(classes, reconciler_options, config_file)
    except OptionError as error:
        _fail(str(error))
    options: dict[str, Any] = {
        "namespace": namespace,
        "leader_election": leader_elect,
        "leader_election_id": leader_election_id,
        "leader_election_namespace": leader_election_namespace,
        "metrics_bind_address": metrics_bind_address,
        "health_probe_bind_address": health_probe_bind_address,
        "max_concurrent_reconciles": max_concurrent_reconciles,
        "graceful_shutdown_timeout": graceful_shutdown_timeout,
        "cache_sync_timeout": cache_sync_timeout,
    }
    connection = {"context": context, "exec_timeout": exec_timeout}
    try:
        asyncio.run(_run(built, kubeconfig, connection, options))
    except CacheSyncTimeout as error:
        _fail(f"{error}; check the operator's role (crdkit gen-rbac ... --check ROLE.yaml)", 1)
    except LeaderElectionLost as error:
        log.error("leader election lost, exiting: %s", error)
        sys.exit(1)
    except ConfigError as error:
        _fail(str(error))
    except ValueError as error:
        raise click.UsageError(str(error)) from None
