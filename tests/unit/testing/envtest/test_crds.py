"""Loading CRDs from files, folders, dicts and models; reading their served state."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from crdkit.testing.envtest.crds import (
    crd_is_established,
    crd_manifest,
    load_crds,
    served_versions,
)


def _crd(plural: str = "widgets") -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": plural, "kind": plural.title()[:-1], "singular": plural[:-1]},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1", "served": True, "storage": True},
                {"name": "v1beta1", "served": False, "storage": False},
            ],
        },
    }


def test_files_folders_and_multi_document_yaml(tmp_path: Path) -> None:
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "a.yaml").write_text(
        yaml.safe_dump_all([_crd("apples"), {"kind": "Namespace"}, None])
    )
    (tmp_path / "crds" / "b.json").write_text(yaml.safe_dump(_crd("bananas")))
    (tmp_path / "crds" / "notes.txt").write_text("not a manifest")
    single = tmp_path / "c.yml"
    single.write_text(yaml.safe_dump({"kind": "List", "items": [_crd("cherries")]}))
    names = [c["metadata"]["name"] for c in load_crds([tmp_path / "crds", str(single)])]
    assert names == ["apples.example.com", "bananas.example.com", "cherries.example.com"]


def test_objects_and_models() -> None:
    class Model:
        def model_dump(self, *, mode: str, by_alias: bool, exclude_none: bool) -> dict[str, Any]:
            assert (mode, by_alias, exclude_none) == ("json", True, True)
            return _crd("models")

    loaded = load_crds([_crd(), Model()])
    assert [c["spec"]["names"]["plural"] for c in loaded] == ["widgets", "models"]


def test_an_object_of_another_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="CustomResourceDefinition"):
        load_crds([{"kind": "ConfigMap"}])


def test_established_needs_both_conditions() -> None:
    crd = _crd()
    assert not crd_is_established(crd)
    crd["status"] = {"conditions": None}
    assert not crd_is_established(crd)
    crd["status"] = {"conditions": [{"type": "Established", "status": "True"}]}
    assert not crd_is_established(crd)
    crd["status"]["conditions"].append({"type": "NamesAccepted", "status": "True"})
    assert crd_is_established(crd)


def test_only_served_versions_are_awaited() -> None:
    assert served_versions(_crd()) == [("example.com", "v1", "widgets")]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("- a\n- b\n", r"bad.yaml: document 1 is not a mapping"),
        ("kind: Namespace\n---\n7\n", r"bad.yaml: document 2 is not a mapping"),
        ("kind: List\nitems: {a: 1}\n", r"document 1: items is not a list of mappings"),
        ("kind: CustomResourceDefinition\n", r"bad.yaml: a CustomResourceDefinition without"),
        ("a: b: c\n", r"bad.yaml: not YAML: mapping values are not allowed here"),
    ],
)
def test_bad_files_are_value_errors_naming_the_file(
    tmp_path: Path, content: str, message: str
) -> None:
    (tmp_path / "bad.yaml").write_text(content)
    with pytest.raises(ValueError, match=message):
        load_crds([tmp_path / "bad.yaml"])


def test_an_empty_list_and_a_null_item_list_hold_no_crds(tmp_path: Path) -> None:
    (tmp_path / "l.yaml").write_text("kind: List\nitems: null\n---\nkind: List\nitems: []\n")
    assert load_crds([tmp_path / "l.yaml"]) == []


def test_crd_manifest_is_one_namespaced_version() -> None:
    schema = {"type": "object"}
    crd = crd_manifest("example.com", "Widget", schema)
    assert crd["metadata"] == {"name": "widgets.example.com"}
    assert crd["spec"]["names"] == {"plural": "widgets", "singular": "widget", "kind": "Widget"}
    assert crd["spec"]["scope"] == "Namespaced"
    assert crd["spec"]["versions"] == [
        {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    ]
    assert load_crds([crd]) == [crd]
    assert served_versions(crd) == [("example.com", "v1", "widgets")]


def test_crd_manifest_options() -> None:
    crd = crd_manifest(
        "example.com", "Policy", {}, version="v2", plural="policies", status_subresource=True
    )
    assert crd["metadata"]["name"] == "policies.example.com"
    assert crd["spec"]["names"]["singular"] == "policy"
    (version,) = crd["spec"]["versions"]
    assert (version["name"], version["subresources"]) == ("v2", {"status": {}})
