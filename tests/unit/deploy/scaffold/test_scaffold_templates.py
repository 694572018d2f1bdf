"""crdkit.deploy.scaffold.templates: every template ships, renders with a project's names and
leaves no placeholder behind; a placeholder without a value is refused."""

from __future__ import annotations

import ast
import tomllib
from importlib.resources import files

import pytest

from crdkit._version import VERSION
from crdkit.deploy.scaffold.names import project_names
from crdkit.deploy.scaffold.templates import (
    TEMPLATES,
    crdkit_requirement,
    project_files,
    render,
)

NAMES = project_names("shop", kind="OrderQueue", group="shop.acme.io", version="v1beta1")


def test_every_template_file_is_used_and_every_used_one_exists() -> None:
    folder = files("crdkit.deploy.scaffold") / "templates"
    shipped = {entry.name for entry in folder.iterdir() if entry.name.endswith(".tmpl")}
    assert shipped == set(TEMPLATES.values())


def test_the_files_of_a_project() -> None:
    written = project_files(NAMES)
    assert set(written) == {
        "pyproject.toml",
        "Makefile",
        "README.md",
        ".gitignore",
        ".dockerignore",
        "shop/__init__.py",
        "shop/models.py",
        "shop/reconciler.py",
        "shop/demo.py",
        "tests/test_reconciler.py",
        "tests/test_live.py",
        "config/samples/order_queue.yaml",
    }
    for path, text in written.items():
        assert "{{" not in text, f"{path} keeps a placeholder"


def test_every_python_file_parses_and_the_model_has_the_names() -> None:
    written = project_files(NAMES)
    for path, text in written.items():
        if path.endswith(".py"):
            ast.parse(text, filename=path)
    models = written["shop/models.py"]
    assert (
        'class OrderQueue(CustomResource, group="shop.acme.io", version="v1beta1", '
        'kind="OrderQueue"):' in models
    )
    assert "class OrderQueueReconciler(Reconciler[OrderQueue]):" in written["shop/reconciler.py"]


def test_the_pyproject_depends_on_this_crdkit_and_tests_on_the_plugin() -> None:
    project = tomllib.loads(project_files(NAMES)["pyproject.toml"])
    assert project["project"]["name"] == "shop"
    assert project["project"]["dependencies"] == [crdkit_requirement()]
    assert project["tool"]["setuptools"]["packages"] == ["shop"]
    assert any(
        dep.startswith("pytest-asyncio")
        for dep in project["project"]["optional-dependencies"]["test"]
    )


def test_the_makefile_runs_the_same_gen_manifests_as_init() -> None:
    makefile = project_files(NAMES)["Makefile"]
    assert (
        "gen-manifests shop.reconciler:OrderQueueReconciler --name shop --image $(IMG)" in makefile
    )
    assert "IMG ?= shop:0.1.0" in makefile
    # make's recipes must start with a tab, which an editor could have turned into spaces
    recipes = [line for line in makefile.splitlines() if line.startswith("\t")]
    assert any("$(BIN)/pytest" in line for line in recipes)


@pytest.mark.parametrize(
    ("version", "requirement"),
    [
        ("0.1.0", "crdkit>=0.1.0,<0.2"),
        ("0.9.3", "crdkit>=0.9.3,<0.10"),
        ("1.4.0", "crdkit>=1.4.0,<2"),
    ],
)
def test_the_requirement_stops_before_the_next_breaking_release(
    version: str, requirement: str
) -> None:
    assert crdkit_requirement(version) == requirement


def test_the_requirement_admits_this_release() -> None:
    assert crdkit_requirement().startswith(f"crdkit>={VERSION},")


def test_render_fills_every_placeholder() -> None:
    assert render("{{a}}-{{b}} {a} $(X)", {"a": "1", "b": "2"}) == "1-2 {a} $(X)"


def test_render_refuses_a_placeholder_without_a_value() -> None:
    with pytest.raises(KeyError, match=r"Makefile.tmpl: no value for the placeholder \{\{nope\}\}"):
        render("x {{nope}}", {}, source="Makefile.tmpl")
