"""``crdkit gen-crd`` end to end on a small module written into a temporary folder."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from pydantic import field_validator

from crdkit.cli import main
from crdkit.crd import python_only, unmirrored_validators
from crdkit.resources import ApiModel

MODELS = textwrap.dedent(
    """
    from crdkit.resources import ApiModel, CustomResource

    class Spec(ApiModel):
        size: int = 1

    class Widget(CustomResource, group="w.example.com", version="v1"):
        spec: Spec

    class Policy(CustomResource, group="w.example.com", version="v1", scope="Cluster"):
        spec: Spec
    """
)
BAD = {
    "nogroup": "from crdkit.resources import CustomResource\n"
    "class Thing(CustomResource, scope='Cluster'):\n    pass\n",
    "twostorage": "from crdkit.resources import CustomResource\n"
    "class A(CustomResource, group='a.example.com', version='v1', storage=True):\n    pass\n"
    "class B(A, version='v2', storage=True):\n    pass\n",
    "unrepresentable": "from crdkit.resources import CustomResource\n"
    "class T(CustomResource, group='a.example.com', version='v1'):\n"
    "    spec: tuple[int, str]\n",
    "empty": "X = 1\n",
    "infinite": "from crdkit.resources import ApiModel, CustomResource\n"
    "class S(ApiModel):\n    limits: dict[str, float] = {'cpu': float('inf')}\n"
    "class T(CustomResource, group='a.example.com', version='v1'):\n    spec: S\n",
    "unbounded": "from pydantic import Field\n"
    "from crdkit.resources import ApiModel, CustomResource\n"
    "class S(ApiModel):\n    size: int = Field(0, le=2**63 - 1)\n"
    "class T(CustomResource, group='a.example.com', version='v1'):\n    spec: S\n",
    "clash": "from pydantic import Field\n"
    "from crdkit.resources import ApiModel, CustomResource\n"
    "class S(ApiModel):\n    foo_bar: int = 0\n    other: int = Field(0, alias='fooBar')\n"
    "class T(CustomResource, group='a.example.com', version='v1'):\n    spec: S\n",
    "costly": "from crdkit.crd import XValidation\n"
    "from crdkit.resources import ApiModel, CustomResource\n"
    "class Port(ApiModel, validations=[XValidation(\"self.name.matches('^[a-z]+$')\")]):\n"
    "    name: str\n"
    "class S(ApiModel):\n    ports: list[Port] = []\n"
    "class T(CustomResource, group='a.example.com', version='v1'):\n    spec: S\n",
    "unbuildable": "from crdkit.resources import CustomResource\n"
    "class Plain:\n    pass\n"
    "class T(CustomResource, group='a.example.com', version='v1'):\n"
    "    spec: Plain\n",
}


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "gen_models.py").write_text(MODELS)
    for name, text in BAD.items():
        (tmp_path / f"gen_{name}.py").write_text(text)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    for name in ["gen_models", *(f"gen_{n}" for n in BAD)]:
        sys.modules.pop(name, None)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["gen-crd", *args])
    return result.exit_code, result.stdout, result.stderr


def test_stdout_has_one_document_per_crd(models: Path) -> None:
    code, out, _ = run("gen_models")
    assert code == 0
    docs = list(yaml.safe_load_all(out))
    assert [d["metadata"]["name"] for d in docs] == [
        "policies.w.example.com",
        "widgets.w.example.com",
    ]
    assert run("gen_models")[1] == out  # deterministic


def test_module_colon_class(models: Path) -> None:
    code, out, _ = run("gen_models:Widget")
    assert code == 0
    assert [d["spec"]["names"]["kind"] for d in yaml.safe_load_all(out)] == ["Widget"]


def test_output_dir_and_drift_check(models: Path) -> None:
    out_dir = models / "crds"
    assert run("gen_models", "-o", str(out_dir))[0] == 0
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "w.example.com_policies.yaml",
        "w.example.com_widgets.yaml",
    ]
    assert run("gen_models", "--check", str(out_dir))[0] == 0
    target = out_dir / "w.example.com_widgets.yaml"
    target.write_text(target.read_text().replace("default: 1", "default: 2"))
    code, out, err = run("gen_models", "--check", str(out_dir))
    assert code == 1
    assert "-                default: 2" in out
    assert "+                default: 1" in out
    assert "out of date" in err


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("gen_nogroup", "Thing declares no group"),
        ("gen_twostorage", "exactly one version must have storage=True, found 2"),
        ("gen_unrepresentable", "T (a.example.com/v1): field .spec: a tuple of mixed types"),
        ("gen_empty", "holds no CustomResource classes"),
        ("gen_infinite", "T (a.example.com/v1): field .spec.limits: default {'cpu': inf} holds"),
        ("gen_unbounded", "T (a.example.com/v1): field .spec.size: maximum 9223372036854775807"),
        ("gen_clash", "field .spec.fooBar: fields foo_bar and other of S both have the JSON name"),
        (
            "gen_costly",
            "ts.a.example.com v1: CEL cost over budget: .spec.ports[*]: "
            "x-kubernetes-validations[0].rule: CEL rule \"self.name.matches('^[a-z]+$')\" has "
            "an estimated cost of 152,240,603,892 (x241,979 times it may run), over the "
            "apiserver's budget of 10,000,000 by more than 100x: bound the list/map around it "
            "(.spec.ports) with MaxItems/MaxProperties; bound what it reads (self.name) with "
            "MaxLength/MaxItems/MaxProperties",
        ),
        ("gen_unbuildable", "importing 'gen_unbuildable' failed: PydanticSchemaGenerationError"),
        ("gen_missing", "cannot import module 'gen_missing'"),
        ("gen_models:Nope", "has no attribute 'Nope'"),
        ("gen_models:Spec", "is not a CustomResource subclass"),
    ],
)
def test_bad_input_exits_2_with_one_line(models: Path, target: str, message: str) -> None:
    code, out, err = run(target)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("crdkit gen-crd: ")
    assert message in err


def test_bad_class_options_are_reported_as_bad_input(models: Path) -> None:
    (models / "gen_badopts.py").write_text(
        "from crdkit.resources import CustomResource\n"
        "class X(CustomResource, group='nodots', version='v1'):\n    pass\n"
    )
    code, _, err = run("gen_badopts")
    sys.modules.pop("gen_badopts", None)
    assert code == 2
    assert "group must be a DNS subdomain" in err


def test_an_output_folder_that_cannot_be_made_is_one_line(models: Path) -> None:
    (models / "a-file").write_text("")
    code, out, err = run("gen_models", "-o", "a-file/crds")
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        "crdkit gen-crd: -o a-file/crds: cannot write the CRDs there: Not a directory (a-file/crds)"
    ]


def test_a_check_folder_with_a_file_that_is_not_text_is_one_line(models: Path) -> None:
    (models / "crds").mkdir()
    (models / "crds" / "w.example.com_widgets.yaml").write_bytes(b"\xff\xfe")
    code, _, err = run("gen_models:Widget", "--check", "crds")
    assert code == 2
    assert err.splitlines() == [
        "crdkit gen-crd: --check crds: cannot read the CRDs there: a file is not UTF-8 text "
        "(invalid start byte)"
    ]


VALIDATED = textwrap.dedent(
    """
    from typing import Self

    from pydantic import field_validator, model_validator

    from crdkit.crd import XValidation, python_only
    from crdkit.resources import ApiModel, CustomResource

    ORDERED = XValidation("self.low <= self.high", check=lambda r: r.low <= r.high)

    class Range(ApiModel, validations=[ORDERED]):
        low: int = 0
        high: int = 0

        @model_validator(mode="after")
        def _not_both_zero(self) -> Self:
            if self.low == self.high == 0:
                raise ValueError("empty range")
            return self

        @field_validator("high")
        @classmethod
        def _small(cls, value: int) -> int:
            return value

        @python_only
        @model_validator(mode="before")
        @classmethod
        def _tidy(cls, data: object) -> object:
            return data

    class Spec(ApiModel):
        ranges: list[Range] = []

    class Ranged(CustomResource, group="w.example.com", version="v1"):
        spec: Spec
    """
)


@pytest.fixture
def validated(models: Path) -> Iterator[Path]:
    (models / "gen_validated.py").write_text(VALIDATED)
    yield models
    sys.modules.pop("gen_validated", None)


def test_validators_without_cel_twin_are_warned_about(validated: Path) -> None:
    code, out, err = run("gen_validated")
    assert code == 0
    assert yaml.safe_load(out)["metadata"]["name"] == "rangeds.w.example.com"
    warnings = [line for line in err.splitlines() if "warning" in line]
    # The model validator and the field validator, named; not the @python_only one, nor the
    # type rule crdkit made from XValidation(check=...).
    assert len(warnings) == 2
    assert "validator Range._not_both_zero (model_validator) has no CEL rule" in warnings[0]
    assert "validator Range._small (field_validator) has no CEL rule" in warnings[1]


def test_check_fails_on_validators_without_cel_twin(validated: Path) -> None:
    out_dir = validated / "crds"
    assert run("gen_validated", "-o", str(out_dir))[0] == 0
    code, out, err = run("gen_validated", "--check", str(out_dir))
    assert code == 1
    assert out == ""  # the files are up to date: the validators alone fail the check
    assert "2 validator(s) without a CEL twin" in err


def test_python_only_marks_the_function_below_the_decorators() -> None:
    class Named(ApiModel):
        name: str = ""

        @python_only
        @field_validator("name")
        @classmethod
        def _lower(cls, value: str) -> str:
            return value.lower()

    class Unmarked(Named):
        @field_validator("name")
        @classmethod
        def _strip(cls, value: str) -> str:
            return value.strip()

    assert unmirrored_validators([Named]) == []
    assert unmirrored_validators([Unmarked]) == [
        "test_python_only_marks_the_function_below_the_decorators.<locals>.Unmarked._strip "
        "(field_validator)"
    ]


def test_check_refuses_a_rule_over_budget_too(models: Path) -> None:
    out_dir = models / "crds"
    out_dir.mkdir()
    code, out, err = run("gen_costly", "--check", str(out_dir))
    assert code == 2
    assert out == ""
    assert ".spec.ports[*]: x-kubernetes-validations[0].rule" in err


def test_a_rule_not_estimated_is_noted_and_generated(models: Path) -> None:
    (models / "gen_bind.py").write_text(
        "from crdkit.crd import XValidation\n"
        "from crdkit.resources import ApiModel, CustomResource\n"
        "class S(ApiModel, validations=[XValidation(\"cel.bind(n, self.name, n != '')\")]):\n"
        "    name: str = 'x'\n"
        "class T(CustomResource, group='a.example.com', version='v1'):\n    spec: S\n"
    )
    try:
        code, out, err = run("gen_bind")
    finally:
        sys.modules.pop("gen_bind", None)
    assert code == 0
    assert "cel.bind" in out
    assert err == (
        "crdkit gen-crd: note: ts.a.example.com v1 .spec: x-kubernetes-validations[0].rule: CEL "
        "cost not estimated offline (not read: cel.bind() is not read); the apiserver checks it "
        "against its budget when the CRD is created\n"
    )
