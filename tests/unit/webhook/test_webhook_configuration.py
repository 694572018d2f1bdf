"""The webhook configurations: one entry per webhook with the settings the issue names (failure
policy, side effects, timeout, admissionReviewVersions v1, rules from the kind, match
conditions), reached through a Service or a URL, with or without a caBundle."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from crdkit import CustomResource
from crdkit.runtime import AdmissionContext, Defaulter, MatchCondition, Validator, Webhook
from crdkit.webhook.configuration import ServiceRef, webhook_configurations


class Pool(CustomResource, group="infra.example.com", version="v2", kind="Pool", scope="Cluster"):
    pass


class Quota(CustomResource, group="infra.example.com", version="v1", kind="Quota"):
    pass


class Anything(Validator[Any]):
    pass


class Nothing(Defaulter[Any]):
    async def default(self, ctx: AdmissionContext, obj: Any) -> None:
        return None


def test_service_configurations() -> None:
    webhooks = [
        Webhook(
            Pool,
            validator=Anything(),
            validate_operations=("CREATE", "UPDATE", "DELETE"),
            failure_policy="Ignore",
            timeout_seconds=5,
            match_conditions=(
                MatchCondition("not-system", "!request.userInfo.username.startsWith('system:')"),
            ),
        ),
        Webhook(Quota, validator=Anything(), defaulter=Nothing(), side_effects="NoneOnDryRun"),
    ]
    mutating, validating = webhook_configurations(
        webhooks, name="infra", service=ServiceRef("infra-webhook", "infra-system")
    )
    assert mutating["kind"] == "MutatingWebhookConfiguration"
    assert [w["name"] for w in mutating["webhooks"]] == ["mquota.infra.example.com"]
    assert validating["kind"] == "ValidatingWebhookConfiguration"
    assert validating["metadata"] == {"name": "infra"}
    pool, quota = validating["webhooks"]
    assert pool == {
        "name": "vpool.infra.example.com",
        "admissionReviewVersions": ["v1"],
        "clientConfig": {
            "service": {
                "name": "infra-webhook",
                "namespace": "infra-system",
                "path": "/validate-infra-example-com-v2-pool",
                "port": 443,
            }
        },
        "failurePolicy": "Ignore",
        "sideEffects": "None",
        "timeoutSeconds": 5,
        "rules": [
            {
                "apiGroups": ["infra.example.com"],
                "apiVersions": ["v2"],
                "operations": ["CREATE", "UPDATE", "DELETE"],
                "resources": ["pools"],
                "scope": "Cluster",
            }
        ],
        "matchConditions": [
            {"name": "not-system", "expression": "!request.userInfo.username.startsWith('system:')"}
        ],
    }
    assert quota["sideEffects"] == "NoneOnDryRun"
    assert quota["rules"][0]["scope"] == "Namespaced"
    assert mutating["webhooks"][0]["reinvocationPolicy"] == "Never"


def test_url_configuration_with_a_ca_bundle_and_only_what_is_needed() -> None:
    (validating,) = webhook_configurations(
        [Webhook(Quota, validator=Anything())],
        name="dev",
        url="https://127.0.0.1:9443/",
        ca_bundle=b"PEM",
        annotations={"cert-manager.io/inject-ca-from": "infra-system/serving-cert"},
    )
    config = validating["webhooks"][0]["clientConfig"]
    assert config == {
        "url": "https://127.0.0.1:9443/validate-infra-example-com-v1-quota",
        "caBundle": base64.b64encode(b"PEM").decode(),
    }
    assert validating["metadata"]["annotations"] == {
        "cert-manager.io/inject-ca-from": "infra-system/serving-cert"
    }


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "exactly one of service and url"),
        ({"url": "https://x", "service": ServiceRef("a", "b")}, "exactly one"),
        ({"url": "http://127.0.0.1:9443"}, "must start with https://"),
    ],
)
def test_bad_options_are_named(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        webhook_configurations([Webhook(Quota, validator=Anything())], name="x", **options)


def test_one_webhook_per_kind() -> None:
    twice = [Webhook(Quota, validator=Anything()), Webhook(Quota, defaulter=Nothing())]
    with pytest.raises(ValueError, match="two webhooks for Quota"):
        webhook_configurations(twice, name="x", url="https://h")


def test_a_service_port_is_checked() -> None:
    with pytest.raises(ValueError, match="service port must be 1 to 65535"):
        ServiceRef("a", "b", port=0)
