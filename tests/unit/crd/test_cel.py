import pytest

from crdkit.crd.cel import cel_field, cel_string


def test_field_names() -> None:
    assert cel_field("replicas") == "replicas"
    assert cel_field("namespace") == "__namespace__"
    assert cel_field("x-y") == "x__dash__y"
    assert cel_field("a.b") == "a__dot__b"
    assert cel_field("a__b") == "a__underscores__b"
    with pytest.raises(ValueError, match="cannot be named"):
        cel_field("a b")


def test_strings() -> None:
    assert cel_string("it's") == "'it\\'s'"
