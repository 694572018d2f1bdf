"""`crdkit place`: the placer on files, printing the contract's JSON.

The contract is docs/reference/placement-io.md.

Bad input is not a result: the command exits with status 2 and prints one line on stderr that
names the field, e.g. ``gang.tasks[1].requests.cpu: invalid quantity "abc": ...``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from crdkit.placer.documents import load_document
from crdkit.placer.plain import place_plainly
from crdkit.placer.policies import DEFAULT_POLICY, POLICIES

if TYPE_CHECKING:
    from crdkit.placer.cluster import Policy

__all__ = ["place_command"]

_FILE = click.Path(dir_okay=False, path_type=Path)


def _fail(message: str) -> NoReturn:
    click.echo(message.replace("\n", " "), err=True)
    sys.exit(2)


# What each file must hold: the contract's top-level shape, and how to say it.
_SHAPES: dict[str, tuple[type, str]] = {
    "cluster": (dict, "a cluster snapshot (an object)"),
    "gang": (dict, "a gang (an object)"),
    "gangs": (list, "a list of gangs"),
}


def _read(path: Path, what: str) -> Any:
    try:
        document = load_document(path)
    except OSError as err:
        _fail(f"{what}: cannot read {path}: {err.strerror or err}")
    except ValueError as err:
        _fail(f"{what}: {err}")
    # Checked here, not left to the models: `Cluster.from_snapshot` takes a string as a file
    # path, so a file holding a JSON string would be opened as a second file.
    kind, expected = _SHAPES[what]
    if not isinstance(document, kind):
        _fail(f"{what}: {path}: expected {expected}, got {_describe(document)}")
    return document


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (an empty document)"
    names = {dict: "an object", list: "a list", bool: "a boolean", str: "a string"}
    return names.get(type(value)) or ("a number" if isinstance(value, int | float) else "a value")


@click.command("place")
@click.option("--cluster", "cluster_file", required=True, type=_FILE, help="Cluster snapshot.")
@click.option("--gang", "gang_file", type=_FILE, help="One gang (JSON or YAML).")
@click.option("--gangs", "gangs_file", type=_FILE, help="A list of gangs placed as a batch.")
@click.option(
    "--policy",
    type=click.Choice(POLICIES),
    default=DEFAULT_POLICY,
    show_default=True,
    help="How domains and nodes are ranked.",
)
def place_command(
    cluster_file: Path, gang_file: Path | None, gangs_file: Path | None, policy: Policy
) -> None:
    """Decide where gangs of pods go in a cluster snapshot; print the placements as JSON.

    With --gangs, gangs are placed by priority (higher first, then file order), each seeing the
    pods of the ones before it, and the output is a list in that order.
    """
    if (gang_file is None) == (gangs_file is None):
        _fail("--gang, --gangs: give exactly one of them")
    snapshot = _read(cluster_file, "cluster")
    if gang_file is not None:
        batch, gangs = False, [_read(gang_file, "gang")]
    else:
        assert gangs_file is not None  # one of the two, checked above
        batch, gangs = True, _read(gangs_file, "gangs")
    try:
        placements = place_plainly(snapshot, gangs, policy, batch=batch)
        if placements is None:
            placements = _place_with_models(snapshot, gangs, policy, batch=batch)
    except ValueError as err:
        _fail(str(err))
    click.echo(json.dumps(placements if batch else placements[0], indent=2))


def _place_with_models(
    snapshot: Any, gangs: list[Any], policy: Policy, *, batch: bool
) -> list[dict[str, Any]]:
    """What `place_plainly` leaves to the models: documents that lean on a coercion, and
    every error of a field's type, worded by pydantic (imported only now)."""
    from crdkit.placer.cluster import Cluster

    cluster = Cluster.from_snapshot(snapshot)
    if batch:
        return [placement.to_dict() for placement in cluster.place_all(gangs, policy)]
    return [cluster.place(gangs[0], policy).to_dict()]
