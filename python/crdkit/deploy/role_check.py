"""``crdkit gen-rbac --check PATH...``: do roles someone wrote grant what gen-rbac would?

The needed permissions are gen-rbac's own rules, flattened to one ``(group, resource, verb,
resourceName)`` each. The file's rules (every Role and ClusterRole in it, also inside a
``List``) are merged and matched as the apiserver's RBAC authorizer matches them: ``"*"`` in
``apiGroups``, ``resources`` or ``verbs`` matches anything, ``"*/status"`` matches the status
subresource of any resource, and a rule with ``resourceNames`` grants only requests for those
names (so it never grants ``list``, ``watch`` or ``create``, which name no object).

Where a rule is granted (which namespace a Role is in) is not compared: the check answers
"is any permission missing from this role", the mistake that shows up as a 403 at run time.
Bindings, ServiceAccounts and kustomizations are skipped (they grant nothing by themselves);
anything else is an error. Several files, and directories of ``.yaml``/``.yml`` files (such as
``gen-manifests``' ``config/rbac``, which splits the roles over several files), are merged into
one set of rules (``load_granted_rules_from``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crdkit._yaml import load_yaml_documents, read_yaml_file
from crdkit.deploy.errors import DeployError

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

__all__ = [
    "GrantedRule",
    "Permission",
    "RoleFileError",
    "load_granted_rules",
    "load_granted_rules_from",
    "missing_permissions",
    "needed_permissions",
    "role_files",
]

_ROLE_KINDS = ("Role", "ClusterRole")
_SKIPPED_KINDS = ("RoleBinding", "ClusterRoleBinding", "ServiceAccount", "Kustomization")
_LIST_KINDS = ("List", "RoleList", "ClusterRoleList")


class RoleFileError(DeployError, ValueError):
    """The role file cannot be read, or a document in it is not a role (one line)."""


@dataclass(frozen=True, order=True)
class Permission:
    """One right: ``verb`` on ``resource`` (maybe ``plural/subresource``) of ``group``."""

    group: str
    resource: str
    verb: str
    name: str | None = None  # a resourceNames restriction of the needed rule

    def describe(self) -> str:
        where = f'group "{self.group}"' + (f', name "{self.name}"' if self.name else "")
        return f"{self.resource} {self.verb} ({where})"


@dataclass(frozen=True)
class GrantedRule:
    """One ``PolicyRule`` of the file."""

    api_groups: frozenset[str]
    resources: frozenset[str]
    verbs: frozenset[str]
    resource_names: frozenset[str]

    def grants(self, permission: Permission) -> bool:
        if "*" not in self.api_groups and permission.group not in self.api_groups:
            return False
        if "*" not in self.verbs and permission.verb not in self.verbs:
            return False
        if not self._resource_matches(permission.resource):
            return False
        if self.resource_names:
            return permission.name is not None and permission.name in self.resource_names
        return True

    def _resource_matches(self, resource: str) -> bool:
        if "*" in self.resources or resource in self.resources:
            return True
        _, slash, subresource = resource.partition("/")
        return bool(slash) and f"*/{subresource}" in self.resources


def needed_permissions(documents: Iterable[dict[str, Any]]) -> list[Permission]:
    """Every permission the roles among ``documents`` (gen-rbac's output) grant, one each."""
    needed: set[Permission] = set()
    for document in documents:
        if document.get("kind") not in _ROLE_KINDS:
            continue
        for rule in document.get("rules", []):
            names = rule.get("resourceNames") or [None]
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    for verb in rule["verbs"]:
                        for name in names:
                            needed.add(Permission(group, resource, verb, name))
    return sorted(needed, key=lambda p: (p.group, p.resource, p.verb, p.name or ""))


def missing_permissions(
    needed: Iterable[Permission], granted: Iterable[GrantedRule]
) -> list[Permission]:
    """The ``needed`` permissions no ``granted`` rule grants, in the order given."""
    rules = list(granted)
    return [p for p in needed if not any(rule.grants(p) for rule in rules)]


def role_files(paths: Iterable[Path]) -> list[Path]:
    """The files ``paths`` name: each file itself, each directory's YAML files (recursively,
    sorted). :class:`RoleFileError` for a path that does not exist or a directory without
    YAML, so a typo never checks nothing."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
            if not found:
                raise RoleFileError(f"{path}: a directory without .yaml or .yml files")
            files.extend(p for p in found if p not in files)
        elif path.exists():
            if path not in files:
                files.append(path)
        else:
            raise RoleFileError(f"{path}: no such file or directory")
    return files


def load_granted_rules_from(paths: Iterable[Path]) -> list[GrantedRule]:
    """The rules of every role in every file of ``paths`` (files and directories), merged."""
    rules: list[GrantedRule] = []
    for path in role_files(paths):
        rules.extend(load_granted_rules(path))
    return rules


def load_granted_rules(path: Path) -> list[GrantedRule]:
    """The rules of every Role and ClusterRole in the YAML file ``path``, merged.

    :class:`RoleFileError` (one line, naming the file and the 1-based document number) for
    a file that cannot be read or parsed, or a document that is not a role or a binding.
    """
    documents = read_yaml_file(path, str(path), RoleFileError, load=load_yaml_documents)
    rules: list[GrantedRule] = []
    for number, document in enumerate(documents, start=1):
        if document is None:
            continue  # an empty document, as a trailing `---` makes
        where = f"{path}: document {number}"
        for item_where, item in _roles_of(document, where):
            rules.extend(_rules_of(item, item_where))
    return rules


def _roles_of(document: Any, where: str) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(document, dict):
        raise RoleFileError(f"{where}: expected a Role or ClusterRole, got {_shape(document)}")
    kind = document.get("kind")
    if kind in _LIST_KINDS:
        items = document.get("items")
        if not isinstance(items, list):
            raise RoleFileError(f"{where}: a {kind} needs a list of items")
        found: list[tuple[str, dict[str, Any]]] = []
        for index, item in enumerate(items):
            found.extend(_roles_of(item, f"{where}, item {index}"))
        return found
    if kind in _SKIPPED_KINDS:
        return []
    if kind not in _ROLE_KINDS:
        raise RoleFileError(
            f"{where}: expected a Role, ClusterRole or a List of them, got kind {kind!r}"
        )
    return [(where, document)]


def _rules_of(role: dict[str, Any], where: str) -> list[GrantedRule]:
    raw_rules = role.get("rules") or []
    if not isinstance(raw_rules, list):
        raise RoleFileError(f"{where}: rules must be a list")
    rules = []
    for index, rule in enumerate(raw_rules):
        if not isinstance(rule, dict):
            raise RoleFileError(f"{where}: rules[{index}] must be a mapping")
        if "nonResourceURLs" in rule and "resources" not in rule:
            continue  # grants URLs such as /healthz, never an API resource
        fields = {}
        for field in ("apiGroups", "resources", "verbs", "resourceNames"):
            value = rule.get(field)
            if value is None:
                value = []
            if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise RoleFileError(f"{where}: rules[{index}].{field} must be a list of strings")
            fields[field] = frozenset(value)
        rules.append(
            GrantedRule(
                fields["apiGroups"], fields["resources"], fields["verbs"], fields["resourceNames"]
            )
        )
    return rules


def _shape(value: Any) -> str:
    return "a list" if isinstance(value, list) else f"{type(value).__name__} {value!r}"[:60]
