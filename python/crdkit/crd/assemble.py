"""Custom resource classes → ``CustomResourceDefinition`` objects (plain dicts).

Classes are grouped by (group, kind): each group is one CRD, each class one version of it.
The versions must agree on everything that belongs to the kind (names, scope, conversion,
CRD labels) and exactly one of them is the storage version. Every version's schema is run
through the structural checker and the CEL cost budget before the CRD is returned.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from crdkit.crd.budget import budget_problems
from crdkit.crd.errors import AssemblyError, CostError, StructuralError
from crdkit.crd.paths import resolve_path
from crdkit.crd.schema import crd_schema
from crdkit.crd.structural import schema_violations

if TYPE_CHECKING:
    from collections.abc import Iterable

    from crdkit.resources import CustomResource, CustomResourceOptions

__all__ = ["build_crd", "build_crds", "version_priority"]

CRD_API_VERSION = "apiextensions.k8s.io/v1"
_KIND_WIDE = (
    "plural",
    "singular",
    "scope",
    "short_names",
    "categories",
    "labels",
    "annotations",
    "conversion",
)
_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key putting versions in Kubernetes priority order (v2, v1, v1beta1, v1alpha1, foo)."""
    match = _VERSION.match(version)
    if match is None:
        return (3, 0, 0, version)
    major, stage, minor = match.groups()
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -int(major), -int(minor or 0), version)


def _options(resource: type[CustomResource]) -> CustomResourceOptions:
    options = resource.__crd_options__
    if options is None:
        raise AssemblyError(
            f"{resource.__qualname__} declares no group: pass group=... (and version=...) "
            "in its class statement"
        )
    return options


def build_crds(resources: Iterable[type[CustomResource]]) -> list[dict[str, Any]]:
    """One CRD per (group, kind), ordered by CRD name."""
    by_kind: dict[tuple[str, str], list[type[CustomResource]]] = {}
    for resource in resources:
        options = _options(resource)
        versions = by_kind.setdefault((options.group, options.kind), [])
        if resource not in versions:
            versions.append(resource)
    crds = [build_crd(versions) for versions in by_kind.values()]
    return sorted(crds, key=lambda crd: str(crd["metadata"]["name"]))


def build_crd(resources: list[type[CustomResource]]) -> dict[str, Any]:
    """The CRD of one kind from its version classes."""
    if not resources:
        raise AssemblyError("no classes given")
    pairs = [(resource, _options(resource)) for resource in resources]
    first_class, first = pairs[0]
    seen_versions: dict[str, str] = {}
    for resource, options in pairs:
        if (options.group, options.kind) != (first.group, first.kind):
            raise AssemblyError(
                f"{resource.__qualname__} is {options.kind}.{options.group}, not "
                f"{first.kind}.{first.group}"
            )
        if options.version in seen_versions:
            raise AssemblyError(
                f"{first.kind}.{first.group}: version {options.version} is declared twice "
                f"({seen_versions[options.version]} and {resource.__qualname__})"
            )
        seen_versions[options.version] = resource.__qualname__
        for name in _KIND_WIDE:
            if getattr(options, name) != getattr(first, name):
                raise AssemblyError(
                    f"{first.kind}.{first.group}: versions disagree on {name}: "
                    f"{first_class.__qualname__} has {getattr(first, name)!r}, "
                    f"{resource.__qualname__} has {getattr(options, name)!r}"
                )
    storage = _storage_version(pairs)
    pairs.sort(key=lambda pair: version_priority(pair[1].version))
    versions = [_version(resource, options, storage) for resource, options in pairs]
    names: dict[str, Any] = {
        "kind": first.kind,
        "listKind": f"{first.kind}List",
        "plural": first.plural,
        "singular": first.singular,
    }
    if first.short_names:
        names["shortNames"] = list(first.short_names)
    if first.categories:
        names["categories"] = list(first.categories)
    metadata: dict[str, Any] = {"name": first.crd_name}
    if first.labels:
        metadata["labels"] = dict(first.labels)
    if first.annotations:
        metadata["annotations"] = dict(first.annotations)
    spec: dict[str, Any] = {
        "group": first.group,
        "names": names,
        "scope": first.scope,
        "versions": versions,
    }
    if first.conversion is not None:
        conversion = first.conversion
        client_config: dict[str, Any] = {
            "service": {
                "name": conversion.service_name,
                "namespace": conversion.service_namespace,
                "path": conversion.path,
                "port": conversion.port,
            }
        }
        if conversion.ca_bundle is not None:
            client_config["caBundle"] = conversion.ca_bundle
        spec["conversion"] = {
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": client_config,
                "conversionReviewVersions": list(conversion.review_versions),
            },
        }
    else:
        spec["conversion"] = {"strategy": "None"}
    return {
        "apiVersion": CRD_API_VERSION,
        "kind": "CustomResourceDefinition",
        "metadata": metadata,
        "spec": spec,
    }


def _storage_version(pairs: list[tuple[type[CustomResource], CustomResourceOptions]]) -> str:
    kind = f"{pairs[0][1].kind}.{pairs[0][1].group}"
    marked = [options.version for _, options in pairs if options.storage]
    if len(pairs) == 1:
        only = pairs[0][1]
        if only.storage is False:
            raise AssemblyError(f"{kind}: its only version {only.version} must be the storage one")
        return only.version
    if len(marked) != 1:
        found = f"{len(marked)} ({', '.join(marked)})" if marked else "none"
        raise AssemblyError(f"{kind}: exactly one version must have storage=True, found {found}")
    return marked[0]


def _version(
    resource: type[CustomResource], options: CustomResourceOptions, storage: str
) -> dict[str, Any]:
    schema = crd_schema(resource)
    has_status = "status" in resource.model_fields
    status = options.status_subresource or (options.status_subresource is None and has_status)
    violations = schema_violations(schema, status_subresource=status)
    if violations:
        raise StructuralError(f"{options.crd_name} {options.version}", violations)
    over_budget = budget_problems(schema)
    if over_budget:
        raise CostError(f"{options.crd_name} {options.version}", over_budget)
    version: dict[str, Any] = {
        "name": options.version,
        "served": options.served,
        "storage": options.version == storage,
        "schema": {"openAPIV3Schema": schema},
    }
    if options.deprecated:
        version["deprecated"] = True
        if options.deprecation_warning is not None:
            version["deprecationWarning"] = options.deprecation_warning
    subresources: dict[str, Any] = {}
    if status:
        subresources["status"] = {}
    if options.scale is not None:
        scale: dict[str, Any] = {
            "specReplicasPath": options.scale.spec_replicas_path,
            "statusReplicasPath": options.scale.status_replicas_path,
        }
        if options.scale.label_selector_path is not None:
            scale["labelSelectorPath"] = options.scale.label_selector_path
        _require_path(
            schema,
            options.scale.spec_replicas_path,
            options,
            "scale subresource specReplicasPath",
            ("integer",),
            under=(".spec.",),
        )
        _require_path(
            schema,
            options.scale.status_replicas_path,
            options,
            "scale subresource statusReplicasPath",
            ("integer",),
            under=(".status.",),
        )
        if options.scale.label_selector_path is not None:
            # A serialised label selector (``a=b,c``), as HorizontalPodAutoscaler reads it.
            _require_path(
                schema,
                options.scale.label_selector_path,
                options,
                "scale subresource labelSelectorPath",
                ("string",),
                under=(".spec.", ".status."),
            )
        subresources["scale"] = scale
    if subresources:
        version["subresources"] = subresources
    if options.printer_columns:
        columns = []
        for column in options.printer_columns:
            entry: dict[str, Any] = {
                "name": column.name,
                "type": column.type,
                "jsonPath": column.json_path,
            }
            if column.format is not None:
                entry["format"] = column.format
            if column.description is not None:
                entry["description"] = column.description
            if column.priority:
                entry["priority"] = column.priority
            columns.append(entry)
        version["additionalPrinterColumns"] = columns
    if options.selectable_fields:
        for path in options.selectable_fields:
            _require_path(
                schema, path, options, "selectable field", ("string", "integer", "boolean")
            )
        version["selectableFields"] = [{"jsonPath": path} for path in options.selectable_fields]
    return version


def _require_path(
    schema: dict[str, Any],
    path: str,
    options: CustomResourceOptions,
    what: str,
    types: tuple[str, ...],
    *,
    under: tuple[str, ...] = (),
) -> None:
    """Refuse a path the apiserver refuses, or one that names no field of ``types``.

    The apiserver itself checks a scale path only for where it starts; a path that names no
    integer field would make every GET of ``/scale`` fail, so it is refused here too. Past a
    preserve-unknown-fields object the type cannot be known: a scale path is taken there (the
    subresource reads what is stored), a selectable field is not (the apiserver refuses it).
    """
    where = f"{options.kind} ({options.group}/{options.version}): {what} {path}"
    if under and not any(path.startswith(prefix) and len(path) > len(prefix) for prefix in under):
        places = " or ".join(prefix.rstrip(".") for prefix in under)
        raise AssemblyError(f"{where} must be a field path under {places}")
    target = resolve_path(schema, path)
    if target.problem is not None:
        raise AssemblyError(f"{where} {target.problem}")
    if target.unknown:
        if under:
            return
        raise AssemblyError(
            f"{where} goes into a preserve-unknown-fields object, whose fields the apiserver "
            "cannot select on"
        )
    if target.schema is not None and target.schema.get("type") not in types:
        raise AssemblyError(f"{where} must be of type {' or '.join(types)}")
