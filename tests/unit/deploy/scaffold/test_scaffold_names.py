"""crdkit.deploy.scaffold.names: every name a project is built from is checked, and a bad one
is refused naming the flag it came from."""

from __future__ import annotations

import pytest

from crdkit.deploy.errors import DeployError
from crdkit.deploy.scaffold.names import ProjectNames, ScaffoldError, project_names


def test_every_name_is_derived_from_the_folder() -> None:
    names = project_names("web-app")
    assert names == ProjectNames(
        name="web-app",
        package="web_app",
        group="web-app.example.com",
        version="v1",
        kind="WebApp",
        image="web-app:0.1.0",
    )
    assert names.reconciler_reference == "web_app.reconciler:WebAppReconciler"


def test_given_names_win_over_derived_ones() -> None:
    names = project_names(
        "folder",
        name="shop",
        package="shop_operator",
        group="shop.acme.io",
        version="v2beta1",
        kind="Order",
        image="registry.acme.io/shop:1.0",
    )
    assert (names.name, names.package, names.group, names.version) == (
        "shop",
        "shop_operator",
        "shop.acme.io",
        "v2beta1",
    )
    assert (names.kind, names.image) == ("Order", "registry.acme.io/shop:1.0")


@pytest.mark.parametrize(
    ("kind", "snake", "dns"),
    [
        ("WebApp", "web_app", "web-app"),
        ("DNSRecord", "dns_record", "dns-record"),
        ("V2", "v2", "v2"),
    ],
)
def test_the_kind_in_snake_case_and_as_a_dns_label(kind: str, snake: str, dns: str) -> None:
    names = project_names("p", kind=kind)
    assert (names.kind_snake, names.kind_dns) == (snake, dns)


@pytest.mark.parametrize(
    ("arguments", "flag", "said"),
    [
        ({"kind": "webApp"}, "--kind", "not a CamelCase kind"),
        ({"kind": "Web-App"}, "--kind", "not a CamelCase kind"),
        ({"kind": "ConfigMap"}, "--kind", "imports from crdkit"),
        ({"group": "example"}, "--group", "not a DNS subdomain"),
        ({"group": "Example.com"}, "--group", "not a DNS subdomain"),
        ({"group": "-a.example.com"}, "--group", "not a DNS subdomain"),
        ({"version": "1"}, "--version", "not a Kubernetes API version"),
        ({"version": "v1gamma1"}, "--version", "not a Kubernetes API version"),
        ({"name": "Shop"}, "--name", "not a valid project name"),
        ({"name": "s" * 41}, "--name", "41 characters long"),
        ({"package": "my-pkg"}, "--package", "not a valid Python package name"),
        ({"package": "class"}, "--package", "not a valid Python package name"),
        ({"package": "json"}, "--package", "a module the project imports"),
        ({"package": "crdkit"}, "--package", "a module the project imports"),
        ({"image": "shop 1"}, "--image", "not a container image reference"),
        ({"image": ""}, "--image", "not a container image reference"),
    ],
)
def test_a_bad_value_names_its_flag(arguments: dict[str, str], flag: str, said: str) -> None:
    with pytest.raises(ScaffoldError, match=said) as raised:
        project_names("shop", **arguments)
    assert raised.value.flag == flag
    assert str(raised.value).startswith(f"{flag}: ")


def test_a_folder_that_is_no_project_name_says_to_give_one() -> None:
    with pytest.raises(ScaffoldError, match="or give --name") as raised:
        project_names("My_Operator")
    assert raised.value.flag == "DIRECTORY"


@pytest.mark.parametrize(
    ("folder", "flag"),
    [
        ("config-map", "DIRECTORY (the kind derived from it; give --kind)"),
        ("json", "DIRECTORY (the package name derived from it; give --package)"),
    ],
)
def test_a_bad_derived_name_blames_its_source_and_says_the_way_out(folder: str, flag: str) -> None:
    with pytest.raises(ScaffoldError) as raised:
        project_names(folder)
    assert raised.value.flag == flag


def test_a_scaffold_error_is_a_deploy_error_and_a_value_error() -> None:
    assert issubclass(ScaffoldError, DeployError)
    assert issubclass(ScaffoldError, ValueError)
