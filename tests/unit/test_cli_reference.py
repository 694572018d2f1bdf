"""docs/reference/cli.md keeps up with the commands: every option of every subcommand is in
its command's section, and the section names no option the command lacks."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from crdkit.cli import main

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "cli.md"


def sections() -> dict[str, str]:
    text = REFERENCE.read_text()
    parts = re.split(r"^## crdkit (\S+)\n", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def leaf_commands() -> dict[str, click.Command]:
    context = click.Context(main)
    found: dict[str, click.Command] = {}
    for name in main.list_commands(context):
        command = main.get_command(context, name)
        assert command is not None
        found[name] = command
    return found


@pytest.mark.parametrize("name", sorted(leaf_commands()))
def test_every_option_is_in_its_commands_section(name: str) -> None:
    section = sections()[name]
    command = leaf_commands()[name]
    commands = [command]
    if isinstance(command, click.Group):
        context = click.Context(command)
        commands = [
            c for n in command.list_commands(context) if (c := command.get_command(context, n))
        ]
    documented = set(
        re.findall(r"^\| (?:`-[a-z]`, )?`(--[a-z0-9-]+)`", section, flags=re.MULTILINE)
    )
    flags = {
        opt
        for each in commands
        for param in each.params
        if isinstance(param, click.Option)
        for opt in param.opts
        if opt.startswith("--") and opt != "--help"
    }
    assert flags - documented == set(), f"undocumented options of crdkit {name}"
    assert documented - flags == set(), f"documented options crdkit {name} does not have"
