"""Loading CustomResourceDefinitions and telling when the apiserver serves them.

A CRD is served once its ``Established`` condition is true, its resources appear in discovery
(which clients resolving kinds through it, like kubectl, need) and its storage answers requests
(a brand-new CRD's storage answers 429 for a moment). Waiting for the condition alone races.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeAlias, runtime_checkable

import yaml

__all__ = ["CrdSource", "crd_is_established", "crd_manifest", "load_crds", "served_versions"]

CRD_KIND = "CustomResourceDefinition"
CRD_API_VERSION = "apiextensions.k8s.io/v1"
_SUFFIXES = (".yaml", ".yml", ".json")


@runtime_checkable
class _PydanticLike(Protocol):
    def model_dump(self, *, mode: str, by_alias: bool, exclude_none: bool) -> dict[str, Any]: ...


CrdSource: TypeAlias = "str | Path | Mapping[str, Any] | _PydanticLike"


def _documents(path: Path) -> Iterator[dict[str, Any]]:
    if path.is_dir():
        for child in sorted(path.iterdir()):
            if child.suffix in _SUFFIXES and child.is_file():
                yield from _documents(child)
        return
    for index, document in enumerate(_parse(path)):
        if document is None:
            continue
        if not isinstance(document, dict):
            raise ValueError(f"{path}: document {index + 1} is not a mapping")
        items = (document.get("items") or []) if document.get("kind") == "List" else [document]
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise ValueError(f"{path}: document {index + 1}: items is not a list of mappings")
        yield from items


def _parse(path: Path) -> list[Any]:
    """Every YAML document of a file; a file that cannot be read or parsed is a ValueError
    naming it, so ``crdkit envtest`` can say what is wrong in one line."""
    try:
        return list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except RecursionError:
        raise ValueError(f"{path}: not YAML: nested too deeply") from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        # PyYAML's constructors raise plain ValueErrors too, for a date such as 2001-02-30.
        first = " ".join(str(exc).split())
        raise ValueError(f"{path}: not YAML: {first[:200]}") from None


def _check_named(crd: dict[str, Any], source: object) -> dict[str, Any]:
    metadata = crd.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if not isinstance(name, str) or not name:
        raise ValueError(f"{source}: a {CRD_KIND} without metadata.name")
    return crd


def load_crds(sources: Iterable[CrdSource]) -> list[dict[str, Any]]:
    """CRDs from files, folders (every YAML/JSON file in them), dicts or pydantic models.

    Documents of other kinds in a file are skipped; an object given directly must be a CRD.
    A file that is not YAML, a document that is not a mapping and a CRD without a name are
    ``ValueError``s naming the file.
    """
    crds: list[dict[str, Any]] = []
    for source in sources:
        if isinstance(source, str | Path):
            crds.extend(
                _check_named(doc, source)
                for doc in _documents(Path(source))
                if doc.get("kind") == CRD_KIND
            )
            continue
        if isinstance(source, Mapping):
            crd = dict(source)
        elif isinstance(source, _PydanticLike):
            crd = source.model_dump(mode="json", by_alias=True, exclude_none=True)
        else:
            raise TypeError(f"not a CRD source: {source!r}")
        if crd.get("kind") != CRD_KIND:
            raise ValueError(f"expected a {CRD_KIND}, got kind {crd.get('kind')!r}")
        crds.append(_check_named(crd, "a CRD object"))
    return crds


def crd_manifest(
    group: str,
    kind: str,
    schema: Mapping[str, Any],
    *,
    version: str = "v1",
    plural: str | None = None,
    status_subresource: bool = False,
) -> dict[str, Any]:
    """A minimal CRD for a test: the namespaced ``kind`` of ``group`` with one served and stored
    ``version``, validated by ``schema`` (its ``openAPIV3Schema``), with the status subresource
    when ``status_subresource``. ``plural`` defaults to the lowercase kind and an ``s``; the
    singular is the lowercase kind."""
    plural = plural or f"{kind.lower()}s"
    served: dict[str, Any] = {"name": version, "served": True, "storage": True}
    if status_subresource:
        served["subresources"] = {"status": {}}
    served["schema"] = {"openAPIV3Schema": schema}
    return {
        "apiVersion": CRD_API_VERSION,
        "kind": CRD_KIND,
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [served],
        },
    }


def crd_is_established(crd: Mapping[str, Any]) -> bool:
    """Whether the apiserver reports the CRD Established (and its names accepted)."""
    # A CRD just created may carry no status yet, or ``conditions: null``.
    status = crd.get("status") or {}
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    return conditions.get("Established") == "True" and conditions.get("NamesAccepted") == "True"


def served_versions(crd: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(group, version, plural) for every version the CRD serves."""
    spec = crd["spec"]
    return [
        (spec["group"], version["name"], spec["names"]["plural"])
        for version in spec.get("versions", [])
        if version.get("served", True)
    ]
