"""The `crdkit` command line: one click group, each subcommand defined beside the code it drives.

The group is lazy: a subcommand's module is imported only when that subcommand runs (or when
`--help` lists them), so `crdkit place` loads the placer and not the client or the runtime.
"""

from __future__ import annotations

import importlib

import click

# Subcommands register here, one line each: name -> (module, attribute).
COMMANDS = {
    "envtest": ("crdkit.testing.cli", "envtest"),
    "gen-crd": ("crdkit.crd.cli", "gen_crd"),
    "gen-rbac": ("crdkit.runtime.rbac_cli", "gen_rbac"),
    "place": ("crdkit.placer.cli", "place_command"),
    "run": ("crdkit.runtime.cli", "run"),
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


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
# The version is looked up (importlib.metadata) only when --version is asked for.
@click.version_option(package_name="crdkit", prog_name="crdkit")
def main() -> None:
    """Typed Kubernetes operators: CRDs from pydantic, an asyncio runtime, a Rust placer."""
