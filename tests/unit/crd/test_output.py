from pathlib import Path

import yaml

from crdkit.crd.output import crd_file_name, drift, render, render_all, write_all

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "things.t.example.com"},
    "spec": {
        "names": {"plural": "things", "kind": "Thing"},
        "group": "t.example.com",
        "versions": [{"name": "v1", "rule": "self.a == 'x' && " + "b" * 200}],
    },
}


def test_render_sorts_keys_and_never_folds_long_lines() -> None:
    text = render(CRD)
    assert text.startswith("---\napiVersion: apiextensions.k8s.io/v1\nkind: Custom")
    assert text.index("group:") < text.index("names:")
    assert any(len(line) > 200 for line in text.splitlines())
    assert yaml.safe_load(text) == CRD


def test_render_all_is_a_stream() -> None:
    assert list(yaml.safe_load_all(render_all([CRD, CRD]))) == [CRD, CRD]


def test_files_and_drift(tmp_path: Path) -> None:
    assert crd_file_name(CRD) == "t.example.com_things.yaml"
    [path] = write_all([CRD], tmp_path / "out")
    assert drift([CRD], tmp_path / "out") == ""
    path.write_text(path.read_text().replace("kind: Thing", "kind: Other"))
    diff = drift([CRD], tmp_path / "out")
    assert "-    kind: Other" in diff
    assert "+    kind: Thing" in diff
    missing = drift([CRD], tmp_path / "empty")
    assert missing.startswith("--- /dev/null")
