"""The failure ``Status`` answers of the fake apiserver, worded as kube-apiserver's.

The wording and the ``details`` differ by where the apiserver decides (the REST layer names
the resource, ``hellos.hello.example.com``; validation and the storage layer name the kind);
tests/integration/testing/test_fake_differential.py compares them with the real ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crdkit.client.errors import ApiError, api_error_from_status

if TYPE_CHECKING:
    from crdkit.testing.fake.kinds import FakeKind

__all__ = [
    "STALE",
    "bad_request",
    "binding_conflict",
    "conflict",
    "invalid",
    "not_found",
    "precondition_failed",
    "status_error",
]


def status_error(
    code: int, reason: str, message: str, kind: FakeKind | None = None, name: str | None = None
) -> ApiError:
    """The exception for a failure ``Status`` as the apiserver would write it."""
    details: dict[str, Any] = {}
    if name is not None:
        details["name"] = name
    if kind is not None:
        if kind.info.group:
            details["group"] = kind.info.group
        details["kind"] = kind.info.plural
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        status["details"] = details
    return api_error_from_status(status, code)


def not_found(kind: FakeKind, name: str) -> ApiError:
    return status_error(
        404, "NotFound", f'{kind.qualified_resource} "{name}" not found', kind, name
    )


def conflict(kind: FakeKind, name: str, why: str) -> ApiError:
    return status_error(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {kind.qualified_resource} "{name}": {why}',
        kind,
        name,
    )


def precondition_failed(kind: FakeKind, name: str, why: str) -> ApiError:
    # The storage layer names the Kind where the REST layer names the resource.
    qualified = f"{kind.info.kind}.{kind.info.group}" if kind.info.group else kind.info.kind
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'Operation cannot be fulfilled on {qualified} "{name}": {why}',
        "reason": "Conflict",
        "details": {"name": name, "group": kind.info.group, "kind": kind.info.kind},
        "code": 409,
    }
    return api_error_from_status(status, 409)


def invalid(
    kind: FakeKind, name: str, field: str, message: str, *, by_resource: bool = False
) -> ApiError:
    # Validation names the kind in the Status details; the update path names the resource.
    details: dict[str, Any] = {"kind": kind.info.plural if by_resource else kind.info.kind}
    if kind.info.group:  # the core group is left out, as the apiserver leaves it out
        details["group"] = kind.info.group
    if name:
        details["name"] = name
    details["causes"] = [{"reason": "FieldValueInvalid", "message": message, "field": field}]
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{kind.info.kind} "{name}" is invalid: {field}: {message}',
        "reason": "Invalid",
        "details": details,
        "code": 422,
    }
    return api_error_from_status(status, 422)


def bad_request(message: str) -> ApiError:
    return status_error(400, "BadRequest", message)


STALE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def binding_conflict(name: str, why: str) -> ApiError:
    """A refused ``pods/<name>/binding``: the binding subresource names itself."""
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'Operation cannot be fulfilled on pods/binding "{name}": {why}',
        "reason": "Conflict",
        "details": {"name": name, "kind": "pods/binding"},
        "code": 409,
    }
    return api_error_from_status(status, 409)
