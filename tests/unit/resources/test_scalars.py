"""Int32, Int64, Bytes and Quantity accept in pydantic what their CRD schema accepts.

The tables are what kube-apiserver v1.37 answered (tests/integration/crd/test_scalar_parity.py
asks it again); each row here failed before these types existed or were fixed.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field, TypeAdapter, ValidationError

from crdkit.resources import ApiModel, Bytes, Int32, Int64, Quantity

INT32 = TypeAdapter(Int32)
INT64 = TypeAdapter(Int64)
BYTES = TypeAdapter(Bytes)
QUANTITY = TypeAdapter(Quantity)


@pytest.mark.parametrize("value", [0, 2**31 - 1, -(2**31), 4.0])
def test_int32_in_range(value: Any) -> None:
    assert INT32.validate_python(value) == int(value)


@pytest.mark.parametrize("value", [2**31, -(2**31) - 1, 2**40, "5", True, 4.5])
def test_int32_out_of_range_or_not_a_number(value: Any) -> None:
    with pytest.raises(ValidationError):
        INT32.validate_python(value)


def test_int64_bounds() -> None:
    assert INT64.validate_python(2**63 - 1) == 2**63 - 1
    with pytest.raises(ValidationError, match="outside the int64 range"):
        INT64.validate_python(2**63)
    with pytest.raises(ValidationError, match="too large a float"):
        INT64.validate_python(2.0**53)


@pytest.mark.parametrize(
    ("text", "data"),
    [("aGVsbG8=", b"hello"), ("aGVsbA==", b"hell"), ("aGVsbB==", b"hell"), ("aGVs", b"hel")],
)
def test_bytes_decode_standard_padded_base64(text: str, data: bytes) -> None:
    assert BYTES.validate_python(text) == data
    assert BYTES.validate_json(f'"{text}"') == data


@pytest.mark.parametrize(
    "text",
    ["", "aGVsbG8", "aGVs\nbG8=", "aGVs bG8=", "aGVsbG-_", "aGVsbG8=\r\n", "=", "aGVsbA==aGVs"],
)
def test_bytes_refuse_what_the_byte_format_refuses(text: str) -> None:
    with pytest.raises(ValidationError, match="not standard padded base64"):
        BYTES.validate_python(text)


def test_bytes_are_written_as_base64_and_empty_bytes_refused() -> None:
    assert BYTES.dump_json(b"hello") == b'"aGVsbG8="'
    assert BYTES.validate_python(b"raw\x00") == b"raw\x00"  # bytes in Python are the data
    with pytest.raises(ValidationError, match="empty byte string"):
        BYTES.validate_python(b"")


def test_plain_bytes_of_an_api_model_are_base64() -> None:
    class Blob(ApiModel):
        data: bytes

    assert Blob.model_validate({"data": "aGVsbG8="}).data == b"hello"
    assert Blob(data=b"hello").model_dump(mode="json") == {"data": "aGVsbG8="}
    with pytest.raises(ValidationError, match="not standard padded base64"):
        Blob.model_validate({"data": "hello"})


def test_bytes_with_length_bounds_are_refused() -> None:
    with pytest.raises(TypeError, match="length bounds on a bytes field"):

        class Bounded(ApiModel):
            data: bytes = Field(max_length=4)


@pytest.mark.parametrize(
    ("value", "text"),
    [(4, "4"), (-5, "-5"), (4.0, "4"), (-4.0, "-4"), (2**63 - 1, str(2**63 - 1)), ("4Gi", "4Gi")],
)
def test_quantity_accepts_what_the_crd_accepts(value: Any, text: str) -> None:
    assert QUANTITY.validate_python(value) == text


@pytest.mark.parametrize(
    "value", ["4XB", " 4", "", "4 ", "4\n", "1.5 Gi", 4.5, 2**63, 2.0**53, True, None]
)
def test_quantity_refuses_what_the_crd_refuses(value: Any) -> None:
    with pytest.raises(ValidationError):
        QUANTITY.validate_python(value)
