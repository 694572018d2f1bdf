"""Unit tests of loading reconciler classes by reference."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from crdkit.runtime.loader import load_reconciler_class


def test_module_reference() -> None:
    cls = load_reconciler_class("examples.hello.operator:HelloReconciler")
    assert cls.__name__ == "HelloReconciler"


def test_file_reference(tmp_path: Path) -> None:
    source = tmp_path / "my_operator_file.py"
    source.write_text(
        "from crdkit import Reconciler\n"
        "from crdkit.resources import ConfigMap\n"
        "class R(Reconciler[ConfigMap]):\n"
        "    pass\n"
        "NOT_A_RECONCILER = 1\n"
    )
    assert load_reconciler_class(f"{source}:R").primary_kind().__name__ == "ConfigMap"
    with pytest.raises(ValueError, match="not a Reconciler subclass"):
        load_reconciler_class(f"{source}:NOT_A_RECONCILER")


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("no_colon", "expected module:ReconcilerClass"),
        ("surely_missing_module_xyz:R", "cannot import"),
        ("examples.hello.operator:Missing", "has no attribute 'Missing'"),
        ("/nonexistent/file.py:R", "no such file"),
    ],
)
def test_bad_references(ref: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_reconciler_class(ref)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def broken(:\n", "importing .* failed: SyntaxError"),
        ("raise RuntimeError('boom at import')\n", "failed: RuntimeError: boom at import"),
    ],
)
def test_a_module_that_fails_to_import_is_a_value_error(
    tmp_path: Path, source: str, message: str
) -> None:
    # A ValueError is what `crdkit run` and `gen-rbac` turn into one line; anything else
    # used to reach the user as a traceback.
    broken = tmp_path / "broken_operator_module.py"
    broken.write_text(source)
    with pytest.raises(ValueError, match=message):
        load_reconciler_class(f"{broken}:R")
    assert "broken_operator_module" not in sys.modules
