"""The names a new project is built from, checked before anything is written.

``crdkit init`` takes a project name, a Python package, an API group, version and kind and an
image; each missing one is derived from the ones before it (the project name from the target
folder). Every check raises :class:`ScaffoldError` naming the flag the bad value came from, so
the message says what to change, not which template it would have broken.
"""

from __future__ import annotations

import keyword
import re
import sys
from dataclasses import dataclass

from crdkit.deploy.errors import DeployError

__all__ = ["ProjectNames", "ScaffoldError", "project_names"]

# The project name prefixes the operator's objects (`<name>-controller-manager`, the
# `<name>-system` namespace), which must be DNS labels of at most 63 characters; 40 leaves room
# for the longest suffix gen-manifests adds.
MAX_NAME = 40
_DNS_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_VERSION = re.compile(r"v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?")
_KIND = re.compile(r"[A-Z][A-Za-z0-9]*")
_PACKAGE = re.compile(r"[a-z_][a-z0-9_]*")
# Names the generated modules import or define besides the kind's own classes: a kind spelled
# like one would shadow it (`class ConfigMap(CustomResource)` in a module that applies
# ConfigMaps).
RESERVED_KINDS = frozenset(
    {
        "ApiModel",
        "Client",
        "Condition",
        "ConfigMap",
        "Context",
        "ControlPlane",
        "CustomResource",
        "FakeCluster",
        "Field",
        "ObjectMeta",
        "OperatorRunner",
        "Path",
        "Reconciler",
    }
)
# A package named like one of these would be shadowed by it, or shadow it, on import.
RESERVED_PACKAGES = frozenset({"crdkit", "tests", "config", "pydantic", "yaml", "pytest"})


class ScaffoldError(DeployError, ValueError):
    """``crdkit init`` was given a value it cannot scaffold from; ``flag`` names the option."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(f"{flag}: {message}")
        self.flag = flag
        self.message = message


@dataclass(frozen=True)
class ProjectNames:
    """Every name the templates use, already checked."""

    name: str
    """The project (distribution) name and the prefix of the operator's Kubernetes objects."""
    package: str
    group: str
    version: str
    kind: str
    image: str

    @property
    def kind_snake(self) -> str:
        """The kind in snake_case, for file, function and object names (`WebApp` -> `web_app`)."""
        return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", self.kind).lower()

    @property
    def kind_dns(self) -> str:
        """The kind as a DNS label, for object names (`WebApp` -> `web-app`)."""
        return self.kind_snake.replace("_", "-")

    @property
    def reconciler_reference(self) -> str:
        """What `crdkit run` and `crdkit gen-manifests` are given."""
        return f"{self.package}.reconciler:{self.kind}Reconciler"


def project_names(
    folder_name: str,
    *,
    name: str | None = None,
    package: str | None = None,
    group: str | None = None,
    version: str = "v1",
    kind: str | None = None,
    image: str | None = None,
) -> ProjectNames:
    """Check the given names and derive the missing ones from the project name, which is
    ``folder_name`` (the target folder's) unless ``name`` is given."""
    name_flag = "--name" if name is not None else "DIRECTORY"
    name = name if name is not None else folder_name
    check_project_name(name, name_flag)
    if package is None:
        # Derived: a bad one is the project name's fault, and --package is the way out.
        package = name.replace("-", "_")
        check_package(package, f"{name_flag} (the package name derived from it; give --package)")
    else:
        check_package(package, "--package")
    group = group if group is not None else f"{name}.example.com"
    check_group(group)
    check_version(version)
    if kind is None:
        kind = "".join(word.capitalize() for word in name.split("-"))
        check_kind(kind, f"{name_flag} (the kind derived from it; give --kind)")
    else:
        check_kind(kind, "--kind")
    image = image if image is not None else f"{name}:0.1.0"
    check_image(image)
    return ProjectNames(name, package, group, version, kind, image)


def check_project_name(name: str, flag: str) -> None:
    if not _DNS_LABEL.fullmatch(name):
        raise ScaffoldError(
            flag,
            f"{name!r} is not a valid project name: lowercase letters, digits and '-', "
            "starting with a letter and not ending with '-' (it names Kubernetes objects)"
            + (", or give --name" if flag == "DIRECTORY" else ""),
        )
    if len(name) > MAX_NAME:
        raise ScaffoldError(
            flag,
            f"{name!r} is {len(name)} characters long; at most {MAX_NAME} fit the object names",
        )


def check_package(package: str, flag: str = "--package") -> None:
    if not _PACKAGE.fullmatch(package) or keyword.iskeyword(package):
        raise ScaffoldError(
            flag,
            f"{package!r} is not a valid Python package name: lowercase letters, digits and '_', "
            "not starting with a digit, and not a keyword",
        )
    if package in RESERVED_PACKAGES or package in sys.stdlib_module_names:
        raise ScaffoldError(
            flag, f"{package!r} is the name of a module the project imports; choose another"
        )


def check_group(group: str) -> None:
    labels = group.split(".")
    if (
        len(group) > 253
        or len(labels) < 2
        or not all(len(label) <= 63 and _DNS_SUBDOMAIN_LABEL.fullmatch(label) for label in labels)
    ):
        raise ScaffoldError(
            "--group",
            f"{group!r} is not a DNS subdomain with at least one dot (such as example.com): "
            "lowercase letters, digits, '-' and '.', each part starting and ending with a "
            "letter or digit",
        )


def check_version(version: str) -> None:
    if not _VERSION.fullmatch(version):
        raise ScaffoldError(
            "--version",
            f"{version!r} is not a Kubernetes API version such as v1, v2beta1 or v1alpha2",
        )


def check_kind(kind: str, flag: str) -> None:
    if not _KIND.fullmatch(kind) or len(kind) > 63:
        raise ScaffoldError(
            flag,
            f"{kind!r} is not a CamelCase kind such as WebApp: an uppercase letter, then "
            "letters and digits (63 at most)",
        )
    if kind in RESERVED_KINDS:
        raise ScaffoldError(
            flag, f"{kind!r} is a name the generated code imports from crdkit; choose another"
        )


def check_image(image: str) -> None:
    if not image or any(c.isspace() for c in image) or image != image.strip("/:@"):
        raise ScaffoldError("--image", f"{image!r} is not a container image reference")
