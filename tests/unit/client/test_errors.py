"""Status → exception mapping: reason first, HTTP code otherwise, server message kept."""

from __future__ import annotations

import json

import pytest

from crdkit.client.errors import (
    AlreadyExists,
    ApiError,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    ServerTimeout,
    TooManyRequests,
    api_error_from_response,
    api_error_from_status,
)


def status(code: int, reason: str, message: str = "msg", **details: object) -> dict[str, object]:
    body: dict[str, object] = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
    }
    if details:
        body["details"] = details
    return body


@pytest.mark.parametrize(
    ("code", "reason", "expected"),
    [
        (409, "AlreadyExists", AlreadyExists),
        (409, "Conflict", Conflict),
        (404, "NotFound", NotFound),
        (403, "Forbidden", Forbidden),
        (410, "Expired", Gone),
        (410, "Gone", Gone),
        (422, "Invalid", Invalid),
        (429, "TooManyRequests", TooManyRequests),
        (500, "ServerTimeout", ServerTimeout),
        (504, "Timeout", ServerTimeout),
        (404, "", NotFound),  # no reason: the code decides
        (418, "", ApiError),  # unknown: the base class
    ],
)
def test_class_from_reason_then_code(code: int, reason: str, expected: type[ApiError]) -> None:
    error = api_error_from_status(status(code, reason))
    assert type(error) is expected
    assert error.code == code
    assert error.message == "msg"


def test_already_exists_is_a_conflict() -> None:
    assert isinstance(api_error_from_status(status(409, "AlreadyExists")), Conflict)


def test_invalid_carries_causes_and_names_fields() -> None:
    error = api_error_from_status(
        status(
            422,
            "Invalid",
            'Widget "w" is invalid',
            causes=[
                {"reason": "FieldValueInvalid", "message": "must be >= 0", "field": "spec.size"},
                {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.x"},
            ],
        )
    )
    assert [c.field for c in error.causes] == ["spec.size", "spec.x"]
    assert "spec.size: must be >= 0" in str(error)


def test_retry_after_from_details() -> None:
    error = api_error_from_status(status(429, "TooManyRequests", retryAfterSeconds=3))
    assert error.retry_after == 3.0
    assert api_error_from_status(status(404, "NotFound")).retry_after is None


def test_response_that_is_not_a_status() -> None:
    error = api_error_from_response(502, b"<html>bad gateway</html>")
    assert error.code == 502
    assert "bad gateway" in error.message
    assert type(api_error_from_response(404, b"")) is NotFound


def test_response_with_status_body() -> None:
    body = json.dumps(status(404, "NotFound", 'pods "x" not found')).encode()
    error = api_error_from_response(404, body)
    assert isinstance(error, NotFound)
    assert str(error) == '404 NotFound: pods "x" not found'
