import pytest

from crdkit.crd.re2 import re2_problem


@pytest.mark.parametrize("pattern", [r"^[a-z]+$", r"\d{1,3}", r"(?i)abc", r"a\\1", r"(?P<n>x)"])
def test_re2_compatible(pattern: str) -> None:
    assert re2_problem(pattern) is None


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(?=a)", "look-ahead"),
        (r"(?<!a)b", "look-behind"),
        (r"(a)\1", "back-references"),
        (r"(?P<n>a)(?P=n)", "named back-references"),
        (r"(?>a)", "atomic"),
        (r"a++", "possessive"),
        (r"a\Z", r"\\Z"),
        (r"(", "does not compile"),
    ],
)
def test_re2_incompatible(pattern: str, reason: str) -> None:
    problem = re2_problem(pattern)
    assert problem is not None
    assert reason.replace("\\\\", "\\") in problem
