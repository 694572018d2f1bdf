"""``crdkit run``: run reconcilers until SIGTERM or SIGINT (``gen-rbac`` is in ``rbac_cli``).

::

    crdkit run examples.hello.operator:HelloReconciler --namespace demo --leader-elect
    crdkit run sched:GangReconciler --option zones=a,b --config sched.yaml

``--option`` and ``--config`` become constructor arguments of the reconciler classes
(``runtime.options``). Exit status 2 for bad arguments, 1 when the operator stops on an error
(caches that never sync, a lost lease), each told in one line.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from crdkit.runtime.cli_common import connection_options, fail, manager_options, run_manager
from crdkit.runtime.loader import load_reconciler_classes
from crdkit.runtime.logs import configure_logging
from crdkit.runtime.manager import Manager
from crdkit.runtime.options import OptionError, build_reconcilers

if TYPE_CHECKING:
    from crdkit.client import Client

__all__ = ["run"]


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
@connection_options
@manager_options
@click.option(
    "--max-concurrent-reconciles",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Workers per controller (unless the reconciler sets its own).",
)
@click.option(
    "--webhook-port",
    type=click.IntRange(1, 65535),
    default=9443,
    show_default=True,
    help="Port of the admission webhooks (HTTPS), served if the reconcilers declare any.",
)
@click.option(
    "--webhook-cert-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory of the webhooks' tls.crt and tls.key (cert-manager's Secret), reloaded "
    "when they change (default: a self-signed pair, for development).",
)
@click.option(
    "--webhook-install",
    default=None,
    metavar="NAME",
    help="Development: apply the webhook configurations NAME, calling this machine "
    "(https://127.0.0.1:PORT) with the self-signed CA.",
)
@click.option(
    "--graceful-shutdown-timeout",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    help="Seconds in-flight reconciles get to finish on SIGTERM/SIGINT.",
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
    metrics_bind_address: str | None,
    metrics_secure: bool,
    metrics_cert_dir: Path | None,
    health_probe_bind_address: str,
    max_concurrent_reconciles: int,
    webhook_port: int,
    webhook_cert_dir: Path | None,
    webhook_install: str | None,
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
        fail("run", str(error))
    options: dict[str, Any] = {
        "namespace": namespace,
        "leader_election": leader_elect,
        "leader_election_id": leader_election_id,
        "leader_election_namespace": leader_election_namespace,
        "metrics_bind_address": metrics_bind_address,
        "metrics_secure": metrics_secure,
        "metrics_cert_dir": metrics_cert_dir,
        "health_probe_bind_address": health_probe_bind_address,
        "max_concurrent_reconciles": max_concurrent_reconciles,
        "graceful_shutdown_timeout": graceful_shutdown_timeout,
        "webhook_bind_address": f":{webhook_port}",
        "webhook_cert_dir": webhook_cert_dir,
        "webhook_install": webhook_install,
        "cache_sync_timeout": cache_sync_timeout,
    }
    connection = {"context": context, "exec_timeout": exec_timeout}

    async def build(client: Client) -> Manager:
        manager = Manager(client, **options)
        for reconciler in built:
            manager.add(reconciler)
        return manager

    run_manager("run", kubeconfig, connection, build)
