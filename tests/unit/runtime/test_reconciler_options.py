"""``crdkit run --option/--config``: options become constructor arguments, converted by the
annotations; every mistake is one line naming the option and the class (no cluster needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pytest
from click.testing import CliRunner

from crdkit import Reconciler
from crdkit.cli import main
from crdkit.resources import ConfigMap, Secret
from crdkit.runtime.options import OptionError, build_reconcilers, reconciler_options
from crdkit.scheduling import ClusterMirror


class Gang(Reconciler[ConfigMap]):
    def __init__(
        self,
        zones: list[str],
        max_gangs: int = 10,
        ratio: float = 0.5,
        dry_run: bool = False,
        label: str | None = None,
        extra: Any = None,
    ) -> None:
        self.zones = zones
        self.max_gangs = max_gangs
        self.ratio = ratio
        self.dry_run = dry_run
        self.label = label
        self.extra = extra


class Audit(Reconciler[Secret]):
    def __init__(self, dry_run: bool = True, interval: int = 60) -> None:
        if interval <= 0:
            raise ValueError("interval must be positive")
        self.dry_run = dry_run
        self.interval = interval


class Plain(Reconciler[Secret]):
    pass


def test_values_are_converted_by_annotation() -> None:
    [options] = reconciler_options(
        [Gang],
        [
            "zones=a, b,,c",
            "max-gangs=3",
            "ratio=0.25",
            "dry_run=Yes",
            "label=none",
            "extra=raw text",
        ],
    )
    assert options == {
        "zones": ["a", "b", "c"],
        "max_gangs": 3,
        "ratio": 0.25,
        "dry_run": True,
        "label": None,
        "extra": "raw text",
    }


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("max_gangs=lots", "--option max_gangs of Gang: expected an integer, got 'lots'"),
        ("ratio=half", "of Gang: expected a number, got 'half'"),
        ("dry_run=maybe", "of Gang: expected true/false/yes/no/1/0, got 'maybe'"),
        ("nope=1", "--option nope: unknown option: Gang (it takes: zones, max_gangs"),
        ("novalue", "--option 'novalue': expected key=value"),
        ("Other.zones=a", "no class 'Other' on the command line (given: Gang)"),
        ("Gang.nope=1", "Gang takes no option 'nope' (it takes: zones,"),
    ],
)
def test_bad_options_name_the_option_and_the_class(option: str, message: str) -> None:
    with pytest.raises(OptionError) as refused:
        reconciler_options([Gang], ["zones=a", option])
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_missing_required_argument_is_named() -> None:
    with pytest.raises(OptionError, match="Gang needs option 'zones': give --option zones=VALUE"):
        reconciler_options([Gang], [])


def test_several_classes_qualified_and_shared_keys() -> None:
    gang, audit = reconciler_options(
        [Gang, Audit], ["zones=a", "dry-run=no", "Audit.dry_run=yes", "interval=5"]
    )
    assert gang == {"zones": ["a"], "dry_run": False}
    assert audit == {"dry_run": True, "interval": 5}
    with pytest.raises(OptionError, match=r"unknown option: Gang .*; Audit .*; Plain takes no"):
        reconciler_options([Gang, Audit, Plain], ["zones=a", "colour=red"])


def test_config_file_values_and_command_line_overrides(tmp_path: Path) -> None:
    config = tmp_path / "gang.yaml"
    config.write_text(
        "zones: [a, b]\nmax_gangs: 4\nratio: 1\nextra: {deep: [1, 2]}\n"
        "Audit:\n  interval: 7\nAudit.dry_run: false\n"
    )
    gang, audit = reconciler_options([Gang, Audit], ["max_gangs=9"], config)
    assert gang == {"zones": ["a", "b"], "max_gangs": 9, "ratio": 1.0, "extra": {"deep": [1, 2]}}
    assert audit == {"interval": 7, "dry_run": False}
    json_config = tmp_path / "gang.json"
    json_config.write_text('{"zones": "x,y", "dry_run": 1}')
    [gang] = reconciler_options([Gang], [], json_config)
    assert gang == {"zones": ["x", "y"], "dry_run": True}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]\n", "expected a mapping of option names to values"),
        ("zones: [a\n", "not YAML or JSON: line 2"),
        ("max_gangs: [1]\nzones: a\n", "--config {path} max_gangs of Gang: expected an integer"),
    ],
)
def test_bad_config_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(OptionError, match=f"^--config {path}") as refused:
        reconciler_options([Gang], [], path)
    assert message.format(path=path) in str(refused.value)


def test_a_constructor_that_refuses_a_value_is_an_option_error() -> None:
    with pytest.raises(OptionError, match=r"^Audit: ValueError: interval must be positive$"):
        build_reconcilers([Audit], ["interval=0"])
    [built] = build_reconcilers([Audit], ["interval=3"])
    assert isinstance(built, Audit)
    assert built.interval == 3


def test_crdkit_run_refuses_bad_options_in_one_line_before_connecting() -> None:
    result = CliRunner().invoke(
        main,
        ["run", "examples.hello.operator:HelloReconciler", "--option", "greeting=hi"],
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        "crdkit run: --option greeting: unknown option: HelloReconciler takes no options"
    ]
    assert result.exception is None or isinstance(result.exception, SystemExit)
    result = CliRunner().invoke(main, ["run", "--help"])
    assert "--option [CLASS.]KEY=VALUE" in result.output
    assert "--config FILE" in result.output


class Placed(Reconciler[ConfigMap]):
    def __init__(
        self,
        mirror: ClusterMirror | None = None,
        sizes: list[int] | None = None,
        mode: Literal["fast", "exact"] = "exact",
        width: int | str = 1,
        out: Path | None = None,
    ) -> None:
        self.mirror = mirror
        self.sizes = sizes
        self.mode = mode
        self.width = width
        self.out = out


def test_an_option_the_annotation_cannot_take_is_refused_not_passed_as_text() -> None:
    with pytest.raises(OptionError) as caught:
        build_reconcilers([Placed], ["mirror=x"])
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("--option mirror")
    assert "ClusterMirror" in message
    assert "'x'" in message
    [built] = build_reconcilers([Placed], ["mirror=none", "sizes=1,2", "mode=fast", "width=3"])
    assert (built.mirror, built.sizes, built.mode, built.width) == (None, [1, 2], "fast", 3)
    [built] = build_reconcilers([Placed], ["width=wide", "out=/tmp/x"])
    assert (built.width, built.out) == ("wide", Path("/tmp/x"))
    for bad, said in [("sizes=1,b", "expected an integer"), ("mode=slow", "expected one of")]:
        with pytest.raises(OptionError, match=said):
            build_reconcilers([Placed], [bad])


def test_crdkit_run_refuses_an_option_of_a_class_type_with_exit_2(tmp_path: Path) -> None:
    module = tmp_path / "placed_operator.py"
    module.write_text(
        "from crdkit import Reconciler\n"
        "from crdkit.resources import ConfigMap\n"
        "from crdkit.scheduling import ClusterMirror\n"
        "class Placed(Reconciler[ConfigMap]):\n"
        "    def __init__(self, mirror: ClusterMirror | None = None) -> None:\n"
        "        self.mirror = mirror or ClusterMirror()\n"
    )
    result = CliRunner().invoke(main, ["run", f"{module}:Placed", "--option", "mirror=x"])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("crdkit run: --option mirror")
    assert "ClusterMirror" in line
