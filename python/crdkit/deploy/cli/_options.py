"""The ``--output`` option of the commands that write through :func:`write_documents`
(``crdkit gen-rbac``, ``crdkit gen-webhooks``), spelled once so both say and take it alike."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["output_option"]

output_option = click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Write to this file instead of stdout.",
)
"""``--output FILE`` / ``-o FILE``: a ``Path``, or ``None`` for stdout."""
