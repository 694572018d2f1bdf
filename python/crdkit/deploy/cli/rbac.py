"""``crdkit gen-rbac``: write the least-privilege RBAC the reconcilers need (``runtime.rbac``).

::

    crdkit gen-rbac examples.hello.operator:HelloReconciler --service-account hello \\
        --service-account-namespace ops [--namespace demo]

Give it the ``--namespace``, ``--leader-election-id`` and ``--leader-election-namespace`` that
``crdkit run`` gets, so the roles cover exactly what the operator touches. Exit status 2 for a
bad reconciler reference or declaration.

``--check PATH`` (repeatable; a file or a directory such as ``config/rbac``) compares instead of
writing: the roles of every file given are merged, then one ``missing: ...`` line per
permission they lack and exit status 1, or ``ok: ...`` and 0 (``runtime.rbac_check``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from crdkit.deploy.cli._options import output_option
from crdkit.deploy.cli.output import write_documents
from crdkit.deploy.rbac import rbac_documents
from crdkit.deploy.role_check import (
    RoleFileError,
    load_granted_rules_from,
    missing_permissions,
    needed_permissions,
    role_files,
)
from crdkit.runtime.loader import build_rbac_sources, load_rbac_sources
from crdkit.runtime.options import OptionError

__all__ = ["gen_rbac"]


@click.command("gen-rbac")
@click.argument("reconcilers", nargs=-1, required=True, metavar="MODULE:CLASS...")
@click.option(
    "--check",
    "check",
    type=click.Path(path_type=Path),
    multiple=True,
    metavar="PATH",
    help="Instead of writing roles, check that the Roles and ClusterRoles in these files "
    "(repeatable; a directory means its .yaml files, e.g. config/rbac; all merged) grant "
    "everything needed: prints one 'missing:' line per permission they lack and exits 1, or "
    "'ok: ...' and exits 0.",
)
@click.option(
    "--option",
    "reconciler_options",
    multiple=True,
    metavar="[CLASS.]KEY=VALUE",
    help="A constructor argument of a reconciler, as crdkit run --option takes it: the "
    "reconcilers are built and their setup() is read, so what it attaches (a ClusterMirror's "
    "Nodes and Pods, runnables) is granted too. Repeatable.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="Reconciler options from a YAML file, as crdkit run --config reads it.",
)
@click.option(
    "--name",
    default="crdkit-operator",
    show_default=True,
    help="Name of the ClusterRole and Roles (the Lease's Role is <name>-leader-election).",
)
@click.option(
    "--namespace",
    "-n",
    default=None,
    help="The namespace the operator watches (crdkit run --namespace): Roles there instead "
    "of a ClusterRole (default: all namespaces).",
)
@click.option(
    "--service-account",
    default=None,
    help="Also write a binding of each role to this service account.",
)
@click.option(
    "--service-account-namespace",
    default="default",
    show_default=True,
    help="Namespace of the service account (where the operator runs).",
)
@click.option(
    "--leader-election-id",
    default=None,
    help="Name of the Lease, as given to crdkit run (default: the controllers' names + -leader).",
)
@click.option(
    "--leader-election-namespace",
    default=None,
    help="Namespace of the Lease (default: --namespace, else the service account's).",
)
@click.option(
    "--shards",
    "sharding",
    is_flag=True,
    help="The operator runs sharded (crdkit run --shards): grant the ring's Leases (create, "
    "get, update, list, watch) instead of the one leader Lease.",
)
@output_option
def gen_rbac(
    reconcilers: tuple[str, ...],
    name: str,
    namespace: str | None,
    service_account: str | None,
    service_account_namespace: str,
    leader_election_id: str | None,
    leader_election_namespace: str | None,
    sharding: bool,
    output: Path | None,
    check: tuple[Path, ...],
    reconciler_options: tuple[str, ...],
    config_file: Path | None,
) -> None:
    """Write the least-privilege roles (and bindings) the reconcilers need.

    MODULE:CLASS names a Reconciler subclass (its kinds, watches, rbac and runnables, and what
    its setup() attaches once built with the --option values), a Runnable subclass (its rbac),
    or a ClientRole subclass (its rbac only: no Lease or Events, e.g. crdkit queue's
    QueueReader).
    """
    try:
        sources, notes = build_rbac_sources(
            load_rbac_sources(reconcilers), reconciler_options, config_file
        )
    except OptionError as error:
        click.echo(f"crdkit gen-rbac: {error}", err=True)
        sys.exit(2)
    for note in notes:
        click.echo(f"crdkit gen-rbac: note: {note}", err=True)
    try:
        documents = rbac_documents(
            sources,
            name=name,
            namespace=namespace,
            service_account=service_account,
            service_account_namespace=service_account_namespace,
            leader_election_id=leader_election_id,
            leader_election_namespace=leader_election_namespace,
            sharding=sharding,
        )
    except (TypeError, ValueError) as error:  # a reconciler's declarations, e.g. its rbac
        raise click.UsageError(str(error)) from None
    if check:
        _check(check, documents)
        return
    write_documents("gen-rbac", documents, output)


def _check(paths: tuple[Path, ...], documents: list[dict[str, Any]]) -> None:
    try:
        files = role_files(paths)
        granted = load_granted_rules_from(files)
    except RoleFileError as error:
        click.echo(f"crdkit gen-rbac: {' '.join(str(error).split())}", err=True)
        sys.exit(2)
    needed = needed_permissions(documents)
    missing = missing_permissions(needed, granted)
    for permission in missing:
        click.echo(f"missing: {permission.describe()}")
    if missing:
        sys.exit(1)
    where = ", ".join(str(f) for f in files)
    grant = "grants" if len(files) == 1 else "grant"
    click.echo(f"ok: {where} {grant} everything the operator needs ({len(needed)} permissions)")
