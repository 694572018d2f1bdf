"""Admission webhooks on typed kinds: ``Validator``, ``Defaulter`` and the ``Webhook`` that
serves them, in the spirit of controller-runtime's ``CustomValidator``/``CustomDefaulter`` and
``ctrl.NewWebhookManagedBy(mgr).For(&T{}).WithValidator(v).WithDefaulter(d)``::

    class HelloValidator(Validator[Hello]):
        async def validate_create(self, ctx: AdmissionContext, obj: Hello) -> Warnings:
            if obj.spec.target == "nobody":
                raise Denied("spec.target: nobody cannot be greeted")
            return ["greeting nobody in particular"] if obj.spec.target == "all" else None

    class HelloDefaulter(Defaulter[Hello]):
        async def default(self, ctx: AdmissionContext, obj: Hello) -> None:
            obj.spec.greeting = obj.spec.greeting or "Hello"

    class HelloReconciler(Reconciler[Hello]):
        webhooks = (Webhook(Hello, validator=HelloValidator(), defaulter=HelloDefaulter()),)

Raising refuses the request with the exception's message: a :class:`Denied` with its HTTP code
(403 by default), a ``ValueError`` with 422; any other exception is a crash in the webhook,
refused with a message that says so (500) and logged with its traceback. What a
validator returns are warnings, shown by kubectl. ``ctx.dry_run`` says the request will not be
persisted: skip side effects then.

:func:`review` answers one ``AdmissionReview`` (v1) and is what the server calls.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import ValidationError

from crdkit.resources import KubernetesObject, resource_info
from crdkit.webhook.errors import WebhookError
from crdkit.webhook.jsonpatch import fit_patch, json_patch

if TYPE_CHECKING:
    from crdkit.resources import ResourceInfo

__all__ = [
    "AdmissionContext",
    "BadReview",
    "Defaulter",
    "Denied",
    "MatchCondition",
    "Operation",
    "Validator",
    "Warnings",
    "Webhook",
    "review",
]

log = logging.getLogger("crdkit.webhook.admission")

K = TypeVar("K", bound=KubernetesObject)
Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]
Warnings = Sequence[str] | None
_OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")
_MATCH_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


class Denied(WebhookError):
    """Refuse the request with ``message``; ``code`` is the HTTP status the apiserver reports
    (403 Forbidden by default, 422 for an invalid object)."""

    def __init__(self, message: str, *, code: int = 403) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class BadReview(WebhookError, ValueError):
    """The request body is not an ``AdmissionReview`` v1 request (the server answers 400)."""


@dataclass(frozen=True)
class AdmissionContext:
    """What the apiserver says about one admission request besides the objects."""

    uid: str
    operation: Operation
    dry_run: bool
    """The request will not be persisted: side effects must be skipped."""
    name: str
    namespace: str | None
    user_info: Mapping[str, Any] = field(default_factory=dict)
    sub_resource: str | None = None
    options: Mapping[str, Any] | None = None


class Validator(Generic[K]):
    """Validates a kind; override the operations it checks. Each returns warnings (or
    ``None``) to admit, or raises to refuse with the exception's message."""

    async def validate_create(self, ctx: AdmissionContext, obj: K) -> Warnings:
        return None

    async def validate_update(self, ctx: AdmissionContext, old: K, new: K) -> Warnings:
        return None

    async def validate_delete(self, ctx: AdmissionContext, obj: K) -> Warnings:
        return None


class Defaulter(Generic[K]):
    """Sets defaults on a kind, in place; the server answers with the JSONPatch of what changed."""

    async def default(self, ctx: AdmissionContext, obj: K) -> None:
        raise NotImplementedError(f"{type(self).__qualname__} must implement default()")


@dataclass(frozen=True)
class MatchCondition:
    """A CEL ``matchConditions`` entry: the webhook is called only where ``expression`` holds."""

    name: str
    expression: str

    def __post_init__(self) -> None:
        if not _MATCH_NAME.match(self.name) or len(self.name) > 63:
            raise ValueError(f"match condition name must be a qualified name, got {self.name!r}")
        if not self.expression.strip():
            raise ValueError(f"match condition {self.name!r}: expression must not be empty")


@dataclass(frozen=True)
class Webhook(Generic[K]):
    """The admission webhooks of one kind: a validating one if ``validator``, a mutating one if
    ``defaulter``, served at controller-runtime's paths (:attr:`validate_path`,
    :attr:`mutate_path`) and described in the generated configurations with these settings."""

    kind: type[K]
    validator: Validator[K] | None = None
    defaulter: Defaulter[K] | None = None
    validate_operations: tuple[Operation, ...] = ("CREATE", "UPDATE")
    mutate_operations: tuple[Operation, ...] = ("CREATE", "UPDATE")
    failure_policy: Literal["Fail", "Ignore"] = "Fail"
    side_effects: Literal["None", "NoneOnDryRun"] = "None"
    timeout_seconds: int = 10
    match_conditions: tuple[MatchCondition, ...] = ()

    def __post_init__(self) -> None:
        info = resource_info(self.kind)  # a TypeError for a kind that cannot be addressed
        where = f"Webhook({info.kind})"
        if self.validator is None and self.defaulter is None:
            raise ValueError(f"{where}: give a validator, a defaulter or both")
        for name in ("validate_operations", "mutate_operations"):
            operations = getattr(self, name)
            if not operations:
                raise ValueError(f"{where}: {name} must not be empty")
            for operation in operations:
                if operation not in _OPERATIONS:
                    raise ValueError(
                        f"{where}: {name} holds {operation!r}, not one of {', '.join(_OPERATIONS)}"
                    )
        if "DELETE" in self.mutate_operations:
            # A DELETE request carries no object to default (only the old one).
            raise ValueError(f"{where}: mutate_operations cannot hold DELETE")
        if self.failure_policy not in ("Fail", "Ignore"):
            raise ValueError(f"{where}: failure_policy must be 'Fail' or 'Ignore'")
        if self.side_effects not in ("None", "NoneOnDryRun"):
            raise ValueError(f"{where}: side_effects must be 'None' or 'NoneOnDryRun'")
        if not 1 <= self.timeout_seconds <= 30:
            raise ValueError(
                f"{where}: timeout_seconds must be 1 to 30 (the apiserver's range), "
                f"got {self.timeout_seconds}"
            )

    @property
    def info(self) -> ResourceInfo:
        return resource_info(self.kind)

    def _suffix(self) -> str:
        info = self.info
        return f"{info.group.replace('.', '-')}-{info.version}-{info.kind.lower()}"

    @property
    def validate_path(self) -> str:
        """``/validate-<group, dots as dashes>-<version>-<kind, lowercase>``."""
        return f"/validate-{self._suffix()}"

    @property
    def mutate_path(self) -> str:
        """``/mutate-<group, dots as dashes>-<version>-<kind, lowercase>``."""
        return f"/mutate-{self._suffix()}"


def _context(request: Mapping[str, Any]) -> AdmissionContext:
    operation = request.get("operation")
    if operation not in _OPERATIONS:
        raise BadReview(f"request.operation must be one of {', '.join(_OPERATIONS)}")
    return AdmissionContext(
        uid=request["uid"],
        operation=operation,
        dry_run=bool(request.get("dryRun", False)),
        name=str(request.get("name") or ""),
        namespace=request.get("namespace") or None,
        user_info=request.get("userInfo") or {},
        sub_resource=request.get("subResource") or None,
        options=request.get("options"),
    )


def parse_review(body: object) -> Mapping[str, Any]:
    """The ``request`` of an ``AdmissionReview`` v1, or :class:`BadReview` naming the field."""
    if not isinstance(body, dict):
        raise BadReview("the body must be a JSON object (an AdmissionReview)")
    if body.get("apiVersion") != "admission.k8s.io/v1" or body.get("kind") != "AdmissionReview":
        raise BadReview("apiVersion/kind must be admission.k8s.io/v1 AdmissionReview")
    request = body.get("request")
    if not isinstance(request, dict):
        raise BadReview("request must be an object")
    if not isinstance(request.get("uid"), str) or not request["uid"]:
        raise BadReview("request.uid must be a non-empty string")
    return request


def _answer(uid: str, **response: Any) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": uid, **response},
    }


def _denial(uid: str, code: int, message: str) -> dict[str, Any]:
    reason = {403: "Forbidden", 422: "Invalid", 500: "InternalError"}.get(code, "")
    status = {"code": code, "message": message, "reason": reason}
    return _answer(uid, allowed=False, status={k: v for k, v in status.items() if v})


def _decode(kind: type[K], raw: Any, what: str) -> K:
    if not isinstance(raw, dict):
        raise BadReview(f"request.{what} must be an object")
    try:
        return kind.model_validate(raw)
    except ValidationError as error:
        raise Denied(f"{what} is not a valid {kind.__name__}: {error}", code=422) from error


async def _validate(
    validator: Validator[K], kind: type[K], ctx: AdmissionContext, request: Mapping[str, Any]
) -> Warnings:
    if ctx.operation == "CREATE":
        return await validator.validate_create(ctx, _decode(kind, request.get("object"), "object"))
    if ctx.operation == "UPDATE":
        old = _decode(kind, request.get("oldObject"), "oldObject")
        return await validator.validate_update(
            ctx, old, _decode(kind, request.get("object"), "object")
        )
    if ctx.operation == "DELETE":
        return await validator.validate_delete(
            ctx, _decode(kind, request.get("oldObject"), "oldObject")
        )
    return None


async def _default(
    defaulter: Defaulter[K], kind: type[K], ctx: AdmissionContext, request: Mapping[str, Any]
) -> list[dict[str, Any]]:
    raw = request.get("object")
    obj = _decode(kind, raw, "object")
    before = obj.to_dict()
    await defaulter.default(ctx, obj)
    after = obj.to_dict()
    return fit_patch(json_patch(before, after), raw, after)


async def review(webhook: Webhook[Any], body: object, *, mutate: bool) -> dict[str, Any]:
    """The ``AdmissionReview`` answering ``body`` with ``webhook``'s defaulter (``mutate``) or
    validator; :class:`BadReview` if ``body`` is not a review. User code failing never raises
    here: it becomes a denial."""
    request = parse_review(body)
    uid = request["uid"]
    ctx = _context(request)
    path = webhook.mutate_path if mutate else webhook.validate_path
    try:
        if mutate:
            if webhook.defaulter is None:
                raise BadReview(f"{path}: no defaulter")
            patch = await _default(webhook.defaulter, webhook.kind, ctx, request)
            if not patch:
                return _answer(uid, allowed=True)
            encoded = base64.b64encode(json.dumps(patch).encode()).decode()
            return _answer(uid, allowed=True, patchType="JSONPatch", patch=encoded)
        if webhook.validator is None:
            raise BadReview(f"{path}: no validator")
        warnings = await _validate(webhook.validator, webhook.kind, ctx, request)
    except BadReview:
        raise
    except Denied as denied:
        return _denial(uid, denied.code, denied.message)
    except ValueError as error:
        # The idiom for "this value is wrong" (pydantic's errors too): a refusal, not a crash.
        return _denial(uid, 422, str(error))
    except Exception as error:
        log.exception(
            "admission webhook %s failed on %s %s",
            path,
            ctx.operation,
            f"{ctx.namespace}/{ctx.name}" if ctx.namespace else ctx.name,
        )
        return _denial(uid, 500, f"the webhook failed ({type(error).__name__}: {error})")
    response: dict[str, Any] = {"allowed": True}
    if warnings:
        response["warnings"] = [str(w) for w in warnings]
    return _answer(uid, **response)
