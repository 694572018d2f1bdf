"""Where the generating commands (``crdkit gen-rbac``, ``crdkit gen-webhooks``) put what they
write: a YAML stream on stdout, or into ``--output``, with an unwritable file one line on stderr
and exit status 2."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click
import yaml

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["write_documents"]


def write_documents(command: str, documents: list[dict[str, Any]], output: Path | None) -> None:
    """``documents`` as one YAML stream (keys in their order) to ``output``, or to stdout."""
    text = yaml.safe_dump_all(documents, sort_keys=False)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        output.write_text(text)
    except OSError as error:
        click.echo(f"crdkit {command}: cannot write {output}: {error.strerror or error}", err=True)
        sys.exit(2)
