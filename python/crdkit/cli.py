"""The `crdkit` command line: one click group, each subcommand defined beside the code it drives.

The group is lazy: a subcommand's module is imported only when that subcommand runs (or when
`--help` lists them), so `crdkit place` loads the placer and not the client or the runtime.

Errors: a subcommand refuses bad input with one line on stderr and exit status 2. Anything
else that escapes one is a crdkit bug; it too is one line (exit status 1) rather than a
traceback, unless ``CRDKIT_DEBUG=1`` asks for the traceback.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import click

from crdkit._version import VERSION

# Subcommands register here, one line each: name -> (module, attribute).
COMMANDS = {
    "envtest": ("crdkit.testing.envtest.cli", "envtest"),
    "gen-crd": ("crdkit.crd.cli", "gen_crd"),
    "gen-manifests": ("crdkit.deploy.cli.manifests", "gen_manifests"),
    "init": ("crdkit.deploy.cli.init", "init"),
    "gen-rbac": ("crdkit.deploy.cli.rbac", "gen_rbac"),
    "gen-webhooks": ("crdkit.deploy.cli.webhooks", "gen_webhooks"),
    "place": ("crdkit.placer.cli", "place_command"),
    "queue": ("crdkit.scheduling.view.queue_cli", "queue_command"),
    "run": ("crdkit.runtime.cli", "run"),
    "scheduler": ("crdkit.scheduling.cli", "scheduler_command"),
}


class _LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attribute = target
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # click's own: usage errors (exit 2), --help, Ctrl-C
        except Exception as error:
            if os.environ.get("CRDKIT_DEBUG"):
                raise
            where = f"crdkit {ctx.invoked_subcommand}" if ctx.invoked_subcommand else "crdkit"
            said = " ".join(str(error).split())
            click.echo(
                f"{where}: internal error: {type(error).__name__}"
                + (f": {said}" if said else "")
                + " (a crdkit bug: please report it; CRDKIT_DEBUG=1 shows the traceback)",
                err=True,
            )
            ctx.exit(1)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(VERSION, prog_name="crdkit")
def main() -> None:
    """Typed Kubernetes operators: CRDs from pydantic, an asyncio runtime, a Rust placer."""
