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
from crdkit.runtime.manager_options import ManagerOptions
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
@connection_options
@manager_options(controllers=True)
def run(
    reconcilers: tuple[str, ...],
    reconciler_options: tuple[str, ...],
    config_file: Path | None,
    kubeconfig: Path | None,
    context: str | None,
    exec_timeout: float,
    event_loop: str,
    log_level: str,
    log_format: str,
    **flags: Any,
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
    try:
        options = ManagerOptions.from_flags(flags)
    except ValueError as error:  # flags that contradict each other, or a bad name
        raise click.UsageError(str(error)) from None
    connection = {"context": context, "exec_timeout": exec_timeout}

    async def build(client: Client) -> Manager:
        manager = Manager(client, options)
        for reconciler in built:
            manager.add(reconciler)
        return manager

    run_manager(
        "run",
        kubeconfig,
        connection,
        build,
        event_loop=event_loop,
        serves_webhooks=any(r.webhooks or r.conversions for r in built),
    )
