"""The files of a new project: the templates shipped in this package's ``templates/`` folder,
filled in with a project's names.

A template marks a value as ``{{key}}``. Rendering refuses a key it has no value for, so a
misspelt placeholder fails here, never as a stray ``{{...}}`` in someone's project.
"""

from __future__ import annotations

import re
from importlib.resources import files
from typing import TYPE_CHECKING

from crdkit._version import VERSION

if TYPE_CHECKING:
    from crdkit.deploy.scaffold.names import ProjectNames

__all__ = ["TEMPLATES", "crdkit_requirement", "project_files", "render"]

# Output path (a format string of the names) -> template file. The templates' own names carry
# no dots or package folders, so they ship as plain package data.
TEMPLATES = {
    "pyproject.toml": "pyproject.toml.tmpl",
    "Makefile": "Makefile.tmpl",
    "README.md": "README.md.tmpl",
    ".gitignore": "gitignore.tmpl",
    ".dockerignore": "dockerignore.tmpl",
    "{package}/__init__.py": "package_init.py.tmpl",
    "{package}/models.py": "models.py.tmpl",
    "{package}/reconciler.py": "reconciler.py.tmpl",
    "{package}/demo.py": "demo.py.tmpl",
    "tests/test_reconciler.py": "test_reconciler.py.tmpl",
    "tests/test_live.py": "test_live.py.tmpl",
    "config/samples/{kind_snake}.yaml": "sample.yaml.tmpl",
}

_PLACEHOLDER = re.compile(r"\{\{(\w*)\}\}")


def crdkit_requirement(version: str = VERSION) -> str:
    """The crdkit a new project depends on: this release, up to the next breaking one (the
    next minor release while crdkit is 0.x, as semantic versioning allows breaks there)."""
    major, minor = (int(part) for part in version.split(".")[:2])
    upper = f"0.{minor + 1}" if major == 0 else f"{major + 1}"
    return f"crdkit>={version},<{upper}"


def values(names: ProjectNames) -> dict[str, str]:
    """What each ``{{key}}`` of the templates stands for."""
    return {
        "name": names.name,
        "package": names.package,
        "group": names.group,
        "version": names.version,
        "kind": names.kind,
        "kind_snake": names.kind_snake,
        "kind_dns": names.kind_dns,
        "image": names.image,
        "reconciler": names.reconciler_reference,
        "crdkit_requirement": crdkit_requirement(),
    }


def render(template: str, known: dict[str, str], *, source: str = "template") -> str:
    """``template`` with every ``{{key}}`` replaced; ``KeyError`` naming ``source`` and the key
    for one ``known`` lacks."""

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in known:
            raise KeyError(f"{source}: no value for the placeholder {{{{{key}}}}}")
        return known[key]

    return _PLACEHOLDER.sub(fill, template)


def project_files(names: ProjectNames) -> dict[str, str]:
    """Every file of a new project (relative POSIX path -> text), before ``config/``'s
    generated manifests and the Dockerfile, which ``crdkit gen-manifests`` writes from the
    code these files hold."""
    known = values(names)
    folder = files("crdkit.deploy.scaffold") / "templates"
    return {
        path.format(package=names.package, kind_snake=names.kind_snake): render(
            (folder / template).read_text(encoding="utf-8"), known, source=template
        )
        for path, template in TEMPLATES.items()
    }
