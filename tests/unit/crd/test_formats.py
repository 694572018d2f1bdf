import pytest

from crdkit.crd.formats import FORMAT_CHECKS, KNOWN_FORMATS


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("node", True),
        ("123", True),  # a single label may be all digits
        ("a-b", True),
        ("ab-c", False),  # go-openapi: one optional hyphen, right after the first character
        ("gpu-node-1.cluster.example", True),
        ("a.b", False),  # the top-level label must be two letters or more
        ("a.b2", False),
        ("-a.example.com", False),
        ("x" * 64 + ".com", False),
    ],
)
def test_hostnames_follow_go_openapi(value: str, valid: bool) -> None:
    assert FORMAT_CHECKS["hostname"](value) is valid


@pytest.mark.parametrize(
    ("value", "valid"),
    [("10.0.0.0/8", True), ("fd00::/64", True), ("10.0.0.1", False), ("10.0.0.0/255.0.0.0", False)],
)
def test_cidrs_need_a_prefix_length(value: str, valid: bool) -> None:
    assert FORMAT_CHECKS["cidr"](value) is valid


def test_every_checked_format_is_known_to_the_apiserver() -> None:
    assert set(FORMAT_CHECKS) <= KNOWN_FORMATS
