"""``review``: AdmissionReview v1 in, the answer out — refusals with the user's message and
code, warnings, dry-run in the context, a crash as a logged refusal, the JSONPatch of a
defaulter fitted to the request's JSON; and the ``Webhook`` declaration's checks."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import pytest
from pydantic import Field

from crdkit import ApiModel, CustomResource
from crdkit.runtime import AdmissionContext, Defaulter, Denied, MatchCondition, Validator, Webhook
from crdkit.webhook.admission import BadReview, review


class Paint(ApiModel):
    gloss: str | None = None


class WidgetSpec(ApiModel):
    size: int = 1
    color: str | None = None
    paint: Paint = Field(default_factory=Paint)


class Widget(CustomResource, group="shop.example.com", version="v1beta1", kind="Widget"):
    spec: WidgetSpec


class Checker(Validator[Widget]):
    def __init__(self) -> None:
        self.contexts: list[AdmissionContext] = []

    async def validate_create(self, ctx: AdmissionContext, obj: Widget) -> list[str] | None:
        self.contexts.append(ctx)
        if obj.spec.size == 0:
            raise Denied("spec.size must not be 0")
        if obj.spec.size == 13:
            raise ValueError("spec.size 13 is not sold")
        if obj.spec.size < 0:
            raise KeyError("oops")
        return ["big"] if obj.spec.size > 5 else None

    async def validate_update(
        self, ctx: AdmissionContext, old: Widget, new: Widget
    ) -> list[str] | None:
        self.contexts.append(ctx)
        if new.spec.size != old.spec.size:
            raise Denied("spec.size is immutable", code=422)
        return None

    async def validate_delete(self, ctx: AdmissionContext, obj: Widget) -> list[str] | None:
        self.contexts.append(ctx)
        return [f"deleting {obj.metadata.name}"]


class Painter(Defaulter[Widget]):
    async def default(self, ctx: AdmissionContext, obj: Widget) -> None:
        if obj.spec.color is None:
            obj.spec.color = "red"


class Glosser(Defaulter[Widget]):
    async def default(self, ctx: AdmissionContext, obj: Widget) -> None:
        obj.spec.paint.gloss = "matte"


def _webhook() -> Webhook[Widget]:
    return Webhook(Widget, validator=Checker(), defaulter=Painter())


def _review(operation: str = "CREATE", *, dry_run: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u-1",
            "operation": operation,
            "name": "w",
            "namespace": "shop",
            "dryRun": dry_run,
            "userInfo": {"username": "alice"},
            **extra,
        },
    }


def _widget(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "shop.example.com/v1beta1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "shop"},
        "spec": spec,
    }


async def test_an_allowed_create_carries_the_warnings_and_the_context() -> None:
    webhook = _webhook()
    answer = await review(webhook, _review(object=_widget(size=7), dry_run=True), mutate=False)
    assert answer["apiVersion"] == "admission.k8s.io/v1"
    assert answer["response"] == {"uid": "u-1", "allowed": True, "warnings": ["big"]}
    assert isinstance(webhook.validator, Checker)
    ctx = webhook.validator.contexts[0]
    assert (ctx.operation, ctx.dry_run, ctx.name, ctx.namespace) == ("CREATE", True, "w", "shop")
    assert ctx.user_info == {"username": "alice"}


@pytest.mark.parametrize(
    ("size", "code", "message"),
    [(0, 403, "spec.size must not be 0"), (13, 422, "spec.size 13 is not sold")],
)
async def test_a_refusal_has_the_users_message_and_code(size: int, code: int, message: str) -> None:
    answer = await review(_webhook(), _review(object=_widget(size=size)), mutate=False)
    response = answer["response"]
    assert response["allowed"] is False
    assert response["status"]["code"] == code
    assert response["status"]["message"] == message


async def test_a_crash_is_a_refusal_saying_so_and_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="crdkit.webhook.admission"):
        answer = await review(_webhook(), _review(object=_widget(size=-1)), mutate=False)
    status = answer["response"]["status"]
    assert status["code"] == 500
    assert status["message"] == "the webhook failed (KeyError: 'oops')"
    assert [r.exc_info is not None for r in caplog.records] == [True]
    assert "/validate-shop-example-com-v1beta1-widget" in caplog.records[0].getMessage()


async def test_update_gets_old_and_new_and_delete_the_old_object() -> None:
    webhook = _webhook()
    refused = await review(
        webhook,
        _review("UPDATE", object=_widget(size=2), oldObject=_widget(size=1)),
        mutate=False,
    )
    assert refused["response"]["status"] == {
        "code": 422,
        "message": "spec.size is immutable",
        "reason": "Invalid",
    }
    deleted = await review(webhook, _review("DELETE", oldObject=_widget()), mutate=False)
    assert deleted["response"]["warnings"] == ["deleting w"]


async def test_an_object_that_is_not_the_kind_is_refused_as_invalid() -> None:
    answer = await review(_webhook(), _review(object=_widget(size="many")), mutate=False)
    assert answer["response"]["status"]["code"] == 422
    assert "object is not a valid Widget" in answer["response"]["status"]["message"]


def _patch(answer: dict[str, Any]) -> list[dict[str, Any]]:
    assert answer["response"]["patchType"] == "JSONPatch"
    patch: list[dict[str, Any]] = json.loads(base64.b64decode(answer["response"]["patch"]))
    return patch


async def test_the_defaulters_changes_come_as_a_json_patch_that_keeps_unknown_fields() -> None:
    raw = _widget(size=2)
    raw["spec"]["undeclared"] = {"kept": True}  # the model drops it; the patch must not
    raw["metadata"]["annotations"] = {"a": "b"}
    answer = await review(_webhook(), _review(object=raw), mutate=True)
    # Only the color: not the undeclared field the model dropped, nor the model's own
    # encoding of metadata (empty labels, finalizers...).
    assert _patch(answer) == [{"op": "add", "path": "/spec/color", "value": "red"}]


async def test_a_missing_parent_is_added_whole() -> None:
    # The model fills spec.paint with its default; the request has none.
    answer = await review(
        Webhook(Widget, defaulter=Glosser()), _review(object=_widget(size=3)), mutate=True
    )
    assert _patch(answer) == [{"op": "add", "path": "/spec/paint", "value": {"gloss": "matte"}}]


async def test_no_change_is_no_patch() -> None:
    answer = await review(_webhook(), _review(object=_widget(color="blue")), mutate=True)
    assert answer["response"] == {"uid": "u-1", "allowed": True}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([], "must be a JSON object"),
        ({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview"}, "apiVersion"),
        ({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}, "request must be"),
        (
            {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {}},
            "request.uid",
        ),
        (_review("PATCH"), "request.operation"),
        (_review(object="x"), "request.object must be an object"),
    ],
)
async def test_a_body_that_is_not_a_review_is_a_bad_review(body: Any, message: str) -> None:
    with pytest.raises(BadReview, match=message):
        await review(_webhook(), body, mutate=False)


def test_paths_follow_controller_runtime() -> None:
    webhook = _webhook()
    assert webhook.validate_path == "/validate-shop-example-com-v1beta1-widget"
    assert webhook.mutate_path == "/mutate-shop-example-com-v1beta1-widget"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "give a validator, a defaulter or both"),
        ({"validator": Checker(), "validate_operations": ()}, "validate_operations must not"),
        ({"validator": Checker(), "mutate_operations": ("PATCH",)}, "mutate_operations holds"),
        ({"defaulter": Painter(), "mutate_operations": ("DELETE",)}, "cannot hold DELETE"),
        ({"validator": Checker(), "timeout_seconds": 31}, "timeout_seconds must be 1 to 30"),
        ({"validator": Checker(), "failure_policy": "Maybe"}, "failure_policy"),
    ],
)
def test_a_bad_declaration_names_the_field(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Webhook(Widget, **options)


def test_a_match_condition_needs_a_name_and_an_expression() -> None:
    with pytest.raises(ValueError, match="qualified name"):
        MatchCondition("not a name", "true")
    with pytest.raises(ValueError, match="expression must not be empty"):
        MatchCondition("ok", " ")
