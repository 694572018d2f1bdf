"""``crdkit init``: a new operator project, ready for ``make test`` and ``make demo``.

::

    crdkit init my-operator [--name NAME] [--package PACKAGE] [--group GROUP]
        [--version VERSION] [--kind KIND] [--image IMAGE] [--force]

It writes the project's sources from templates (``crdkit.deploy.scaffold``) and then runs
``crdkit gen-manifests`` on them for ``config/`` and the Dockerfile, the command ``make
manifests`` runs later. A bad name is refused naming its flag, and a folder with anything in it
is refused unless ``--force``, both before a file is written (exit status 2).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

from crdkit.deploy.scaffold.names import ProjectNames, ScaffoldError, project_names
from crdkit.deploy.scaffold.target import check_target, write_files
from crdkit.deploy.scaffold.templates import project_files

__all__ = ["init"]


@click.command("init")
@click.argument(
    "directory",
    type=click.Path(path_type=Path),
    default=Path("."),
    required=False,
)
@click.option(
    "--name",
    default=None,
    help="Project name, the prefix of its objects (default: the folder's name).",
)
@click.option(
    "--package", default=None, help="Python package (default: the name with '_' for '-')."
)
@click.option("--group", default=None, help="API group of the kind (default: <name>.example.com).")
@click.option(
    "--version", "api_version", default="v1", show_default=True, help="API version of the kind."
)
@click.option(
    "--kind", default=None, help="The resource's kind, CamelCase (default: from the name)."
)
@click.option(
    "--image", default=None, help="The operator's container image (default: <name>:0.1.0)."
)
@click.option(
    "--force",
    is_flag=True,
    help="Write into a folder that is not empty, overwriting files of the same name.",
)
def init(
    directory: Path,
    name: str | None,
    package: str | None,
    group: str | None,
    api_version: str,
    kind: str | None,
    image: str | None,
    force: bool,
) -> None:
    """Create a new operator project: a typed resource and its reconciler, unit and
    integration tests, a Makefile (make test, make demo), config/ and a Dockerfile."""
    try:
        names = project_names(
            directory.resolve().name,
            name=name,
            package=package,
            group=group,
            version=api_version,
            kind=kind,
            image=image,
        )
        check_target(directory, force=force)
        contents = project_files(names)
        written = write_files(directory, contents)
    except ScaffoldError as error:
        raise click.BadParameter(error.message, param_hint=error.flag) from None
    except OSError as error:
        raise click.UsageError(
            f"cannot write into {directory}: {error.strerror or error}"
        ) from None
    for path, existed in written:
        click.echo(f"{'overwrote' if existed else 'wrote'} {path}")
    generate_manifests(directory, names, force=force)
    click.echo(
        f"\n{names.kind} operator created in {directory}. Next, in that folder:\n"
        "  make test   # its unit tests, and one on a local control plane\n"
        "  make demo   # the operator against a local control plane"
    )


def generate_manifests(directory: Path, names: ProjectNames, *, force: bool) -> None:
    """Run ``crdkit gen-manifests`` on the new project, in ``directory``.

    It runs in a child process because it imports the new package: imported here, its modules
    and its CustomResource classes would stay registered in this process (where gen-manifests
    looks for every version of a kind), and a second project of the same package name in one
    process would find the first one's modules.
    """
    command = [
        sys.executable,
        "-c",
        "from crdkit.cli import main; main(prog_name='crdkit')",
        "gen-manifests",
        names.reconciler_reference,
        "--name",
        names.name,
        "--image",
        names.image,
        *(["--force"] if force else []),
    ]
    # No __pycache__ left in the new project by this one import.
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(command, cwd=directory, env=env, capture_output=True, text=True)
    # Its paths are the project's own (config/..., Dockerfile), as `make manifests` prints them.
    click.echo(f"crdkit gen-manifests, in {directory}:")
    for line in done.stdout.splitlines():
        click.echo(f"  {line}")
    if done.returncode != 0:
        raise click.ClickException(
            "crdkit gen-manifests failed on the new project (a crdkit bug: please report it):\n"
            + done.stderr.strip()
        )
