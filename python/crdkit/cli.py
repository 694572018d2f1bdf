"""The `crdkit` command line: one click group, each subcommand defined beside the code it drives."""

from __future__ import annotations

import click

from crdkit import __version__
from crdkit.crd.cli import gen_crd
from crdkit.placer.cli import place_command
from crdkit.runtime.cli import gen_rbac, run
from crdkit.testing.cli import envtest


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="crdkit")
def main() -> None:
    """Typed Kubernetes operators: CRDs from pydantic, an asyncio runtime, a Rust placer."""


# Subcommands register here, one line each.
main.add_command(envtest)
main.add_command(gen_crd)
main.add_command(run)
main.add_command(gen_rbac)
main.add_command(place_command)
