"""``crdkit gen-crd``: write the CRDs of custom resource classes.

A pydantic validator with no CEL twin (``crdkit.crd.validators``) is a warning on stderr,
and makes ``--check`` fail.

Exit status: 0 done; 1 ``--check`` found files out of date (the diff is printed) or
validators the CRD does not mirror; 2 bad input
(nothing found, a class without group, two storage versions, a field with no structural
form, a CEL rule over the apiserver's cost budget), reported as one line on stderr. A CEL rule
whose cost is not estimated offline is named in a note on stderr (the apiserver decides it).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from crdkit.crd.assemble import build_crds
from crdkit.crd.budget import unestimated_rules
from crdkit.crd.discover import find_resources
from crdkit.crd.errors import CrdError
from crdkit.crd.output import drift, render_all, write_all
from crdkit.crd.validators import unmirrored_validators

__all__ = ["gen_crd"]


@click.command("gen-crd")
@click.argument("targets", nargs=-1, required=True, metavar="TARGET...")
@click.option(
    "-o",
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write one <group>_<plural>.yaml per CRD here (default: YAML stream on stdout).",
)
@click.option(
    "--check",
    "check_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Do not write; exit 1 with a diff if the files in this folder are out of date.",
)
def gen_crd(targets: tuple[str, ...], output_dir: Path | None, check_dir: Path | None) -> None:
    """CustomResourceDefinitions from CustomResource classes.

    TARGET is a module (every CustomResource in it) or module:Class.
    """
    if output_dir is not None and check_dir is not None:
        _fail("-o and --check cannot be used together")
    try:
        resources = find_resources(targets)
        crds = build_crds(resources)
    except CrdError as error:
        _fail(str(error))
    _note_unestimated(crds)
    unmirrored = unmirrored_validators(resources)
    for validator in unmirrored:
        click.echo(
            f"crdkit gen-crd: warning: validator {validator} has no CEL rule in the CRD, so "
            "the apiserver and pydantic disagree where it refuses (or rewrites) a value; write "
            "it as XValidation(rule, check=...) or mark it @python_only",
            err=True,
        )
    if check_dir is not None:
        try:
            diff = drift(crds, check_dir)
        except (OSError, UnicodeDecodeError) as error:
            _fail(f"--check {check_dir}: cannot read the CRDs there: {_reason(error)}")
        if diff:
            click.echo(diff, nl=False)
            click.echo(
                f"crdkit gen-crd: CRDs in {check_dir} are out of date; regenerate with "
                f"crdkit gen-crd {' '.join(targets)} -o {check_dir}",
                err=True,
            )
        if unmirrored:
            click.echo(
                f"crdkit gen-crd: --check: {len(unmirrored)} validator(s) without a CEL twin "
                "(see the warnings above)",
                err=True,
            )
        if diff or unmirrored:
            sys.exit(1)
        return
    if output_dir is not None:
        try:
            written = write_all(crds, output_dir)
        except OSError as error:
            _fail(f"-o {output_dir}: cannot write the CRDs there: {_reason(error)}")
        for path in written:
            click.echo(f"wrote {path}", err=True)
        return
    click.echo(render_all(crds), nl=False)


def _note_unestimated(crds: list[dict[str, Any]]) -> None:
    for crd in crds:
        for version in crd["spec"]["versions"]:
            for rule in unestimated_rules(version["schema"]["openAPIV3Schema"]):
                click.echo(
                    f"crdkit gen-crd: note: {crd['metadata']['name']} {version['name']} "
                    f"{rule.where}: CEL cost not estimated offline ({rule.reason}); the "
                    "apiserver checks it against its budget when the CRD is created",
                    err=True,
                )


def _fail(message: str) -> NoReturn:
    # One line, always: pydantic and import errors can span several.
    click.echo(f"crdkit gen-crd: {' '.join(message.split())}", err=True)
    sys.exit(2)


def _reason(error: OSError | UnicodeDecodeError) -> str:
    if isinstance(error, UnicodeDecodeError):
        return f"a file is not UTF-8 text ({error.reason})"
    where = f" ({error.filename})" if error.filename else ""
    return f"{error.strerror or error}{where}"
