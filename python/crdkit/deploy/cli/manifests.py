"""``crdkit gen-manifests``: write an operator's ``config/`` (kustomize bases) and Dockerfile.

::

    crdkit gen-manifests examples.hello.operator:HelloReconciler --name hello \\
        --image registry.example.com/hello:0.1 [--namespace hello-system] [--watch-namespace demo]

What follows from the code is rewritten on every run, as controller-gen rewrites it: the CRDs
(``crd/bases``) and the roles (``rbac/role.yaml``, ``rbac/leader_election_role.yaml``). The
other files are a scaffold, written once and then the user's: an existing one is kept (and
said so) unless ``--force``. A CRD file whose kind the reconcilers no longer use is kept and
named, never deleted. Exit status 2 for a bad reconciler reference or option.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import yaml

from crdkit.crd.output import render
from crdkit.deploy.container_image import dockerfile
from crdkit.deploy.manifests import ManifestOptions, operator_manifests
from crdkit.runtime.loader import build_rbac_sources, load_rbac_sources
from crdkit.runtime.options import OptionError

__all__ = ["gen_manifests"]

# Files derived from the code: always rewritten.
GENERATED = (
    "crd/bases/",
    "rbac/role.yaml",
    "rbac/leader_election_role.yaml",
    "webhook/manifests.yaml",
)


@click.command("gen-manifests")
@click.argument("reconcilers", nargs=-1, required=True, metavar="MODULE:CLASS...")
@click.option("--name", required=True, help="The operator's name (prefix of every object).")
@click.option("--image", required=True, help="The manager's container image.")
@click.option(
    "--namespace",
    default=None,
    help="Where the operator runs (default: <name>-system).",
)
@click.option(
    "--watch-namespace",
    default=None,
    help="Watch only this namespace (crdkit run --namespace): Roles there, not a ClusterRole.",
)
@click.option(
    "--leader-elect/--no-leader-elect",
    default=True,
    show_default=True,
    help="Run the manager with a Lease (and grant the namespaced leader-election Role).",
)
@click.option(
    "--shards",
    "sharded",
    is_flag=True,
    help="Every replica a shard of one ring (crdkit run --shards; with --no-leader-elect): "
    "the Deployment's pods share the objects, and the Role grants the ring's Leases.",
)
@click.option("--replicas", type=click.IntRange(min=1), default=1, show_default=True)
@click.option(
    "--metrics-secure/--metrics-insecure",
    default=True,
    show_default=True,
    help="Serve /metrics over HTTPS (:8443) to tokens RBAC allows (the metrics-reader role), "
    "or over plain HTTP (:8080).",
)
@click.option(
    "--option",
    "run_options",
    multiple=True,
    metavar="[CLASS.]KEY=VALUE",
    help="Passed to crdkit run --option in the Deployment; repeatable.",
)
@click.option(
    "--output-dir",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("config"),
    show_default=True,
)
@click.option(
    "--dockerfile",
    "dockerfile_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("Dockerfile"),
    show_default=True,
    help="Where to write the image's Dockerfile.",
)
@click.option("--force", is_flag=True, help="Rewrite scaffold files that exist already.")
def gen_manifests(
    reconcilers: tuple[str, ...],
    name: str,
    image: str,
    namespace: str | None,
    watch_namespace: str | None,
    leader_elect: bool,
    sharded: bool,
    replicas: int,
    metrics_secure: bool,
    run_options: tuple[str, ...],
    output_dir: Path,
    dockerfile_path: Path,
    force: bool,
) -> None:
    """Write an operator's config/ (CRDs, RBAC, manager Deployment, metrics Service as kustomize
    bases) and its Dockerfile."""
    try:
        sources, notes = build_rbac_sources(load_rbac_sources(reconcilers), run_options)
    except OptionError as error:
        raise click.UsageError(str(error)) from None
    for note in notes:
        click.echo(f"crdkit gen-manifests: note: {note}", err=True)
    try:
        options = ManifestOptions(
            name=name,
            image=image,
            references=reconcilers,
            namespace=namespace,
            watch_namespace=watch_namespace,
            leader_elect=leader_elect,
            sharded=sharded,
            replicas=replicas,
            metrics_secure=metrics_secure,
            run_options=run_options,
        )
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    try:
        files = operator_manifests(sources, options)
    except (TypeError, ValueError) as error:  # the reconcilers' declarations or their models
        raise click.UsageError(str(error)) from None
    written = {relative: _text(relative, documents) for relative, documents in files.items()}
    written[str(dockerfile_path)] = dockerfile(options)
    for relative, text in written.items():
        path = Path(relative) if relative == str(dockerfile_path) else output_dir / relative
        generated = relative.startswith(GENERATED)
        if path.exists() and not generated and not force:
            click.echo(f"kept {path} (it exists; --force rewrites it)")
            continue
        _write(path, text)
        click.echo(f"wrote {path}")
    bases = output_dir / "crd" / "bases"
    expected = {output_dir / r for r in files if r.startswith("crd/bases/")}
    for stale in sorted(set(bases.glob("*.yaml")) - expected):
        click.echo(f"kept {stale}: no reconciler uses its kind any more; delete it if unwanted")


def _text(relative: str, documents: list[dict[str, Any]]) -> str:
    if relative.startswith("crd/bases/"):
        return "".join(render(document) for document in documents)
    return yaml.safe_dump_all(documents, sort_keys=False, explicit_start=True)


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        reason = error.strerror or error
        click.echo(f"crdkit gen-manifests: cannot write {path}: {reason}", err=True)
        sys.exit(2)
