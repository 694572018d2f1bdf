"""The documentation's hello examples run as written and cannot drift apart: the quickstart's
unit test passes, the README's operator is the quickstart's, and the testing guide shows the
quickstart's unit test."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[4]
README = ROOT / "README.md"
QUICKSTART = ROOT / "docs" / "quickstart.md"
TESTING_GUIDE = ROOT / "docs" / "guides" / "testing.md"

OPERATOR_SECTION = "## Your first operator in 40 lines"
UNIT_TEST_SECTION = "## Test it without a control plane"
GUIDE_UNIT_TEST_SECTION = "## Unit tests without a control plane"


def first_python_block(path: Path, heading: str) -> str:
    """The first ```python block after ``heading`` in ``path``."""
    text = path.read_text()
    assert heading in text, f"{path.name} has no section {heading!r}"
    section = text.split(heading, 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, f"the section {heading!r} of {path.name} has no python example"
    return match.group(1)


async def test_the_quickstart_unit_test_passes() -> None:
    namespace: dict[str, Any] = {}
    code = first_python_block(QUICKSTART, UNIT_TEST_SECTION)
    exec(compile(code, "docs/quickstart.md", "exec"), namespace)  # the docs are ours
    tests = [value for name, value in namespace.items() if name.startswith("test_")]
    assert tests, "the example defines no test"
    for test in tests:
        await test()


def test_the_readme_operator_is_the_quickstart_operator() -> None:
    readme = first_python_block(README, OPERATOR_SECTION)
    quickstart = first_python_block(QUICKSTART, OPERATOR_SECTION)
    assert readme == quickstart, "README.md and docs/quickstart.md show different operators"


def test_the_testing_guide_shows_the_quickstart_unit_test() -> None:
    guide = first_python_block(TESTING_GUIDE, GUIDE_UNIT_TEST_SECTION)
    quickstart = first_python_block(QUICKSTART, UNIT_TEST_SECTION)
    assert guide == quickstart, "docs/guides/testing.md and docs/quickstart.md differ"


def test_the_quickstart_operator_is_the_example_module() -> None:
    # The quickstart says it shows all of examples/hello/operator.py but its docstring and
    # `from __future__ import annotations`.
    source = (ROOT / "examples" / "hello" / "operator.py").read_text()
    body = source.split("from __future__ import annotations\n", 1)[1].lstrip("\n")
    assert first_python_block(QUICKSTART, OPERATOR_SECTION) == body
