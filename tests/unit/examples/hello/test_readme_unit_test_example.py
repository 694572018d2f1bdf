"""The README's unit test of the hello operator runs as written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parents[4] / "README.md"


def readme_example() -> str:
    text = README.read_text()
    section = text.split("### Unit tests without a control plane", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the section has no python example"
    return match.group(1)


async def test_the_readme_example_passes() -> None:
    namespace: dict[str, Any] = {}
    exec(compile(readme_example(), "README.md", "exec"), namespace)  # the README is ours
    tests = [value for name, value in namespace.items() if name.startswith("test_")]
    assert tests, "the example defines no test"
    for test in tests:
        await test()
