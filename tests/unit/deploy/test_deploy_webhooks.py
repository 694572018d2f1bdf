"""gen-manifests with webhooks: the webhook Service, cert-manager's Issuer and Certificate, the
configurations calling that Service with cainjector's annotation, the Deployment serving the
Secret on port 9443, a converting CRD pointed at /convert; nothing of it without webhooks."""

from __future__ import annotations

from typing import Any

from examples.conversion.boxes import BOX_CONVERSION, BoxV1
from examples.hello.operator import HelloReconciler
from examples.hello.webhooks import HelloWebhookReconciler

from crdkit import Context, Reconciler
from crdkit.deploy.manifests import ManifestOptions, operator_manifests

REF = "examples.hello.webhooks:HelloWebhookReconciler"


class BoxReconciler(Reconciler[BoxV1]):
    conversions = (BOX_CONVERSION,)

    async def reconcile(self, ctx: Context, obj: BoxV1) -> None:
        return None


def _files(*sources: Any) -> dict[str, list[dict[str, Any]]]:
    options = ManifestOptions(name="hello", image="img", references=(REF,))
    return operator_manifests(list(sources), options)


def test_webhooks_get_a_service_a_certificate_and_their_configurations() -> None:
    files = _files(HelloWebhookReconciler)
    (service,) = files["webhook/service.yaml"]
    assert service["metadata"] == {
        "name": "hello-webhook-service",
        "namespace": "hello-system",
        "labels": service["spec"]["selector"],
    }
    assert service["spec"]["ports"] == [
        {"name": "webhook", "port": 443, "targetPort": "webhook", "protocol": "TCP"}
    ]
    issuer, certificate = files["certmanager/certificate.yaml"]
    assert issuer["spec"] == {"selfSigned": {}}
    assert certificate["spec"] == {
        "dnsNames": [
            "hello-webhook-service.hello-system.svc",
            "hello-webhook-service.hello-system.svc.cluster.local",
        ],
        "issuerRef": {"kind": "Issuer", "name": "hello-selfsigned-issuer"},
        "secretName": "hello-webhook-server-cert",
    }
    mutating, validating = files["webhook/manifests.yaml"]
    for configuration in (mutating, validating):
        assert configuration["metadata"]["annotations"] == {
            "cert-manager.io/inject-ca-from": "hello-system/hello-serving-cert"
        }
        service_ref = configuration["webhooks"][0]["clientConfig"]["service"]
        assert (service_ref["name"], service_ref["namespace"]) == (
            "hello-webhook-service",
            "hello-system",
        )
    assert files["webhook/kustomization.yaml"][0]["resources"] == ["service.yaml", "manifests.yaml"]
    assert files["certmanager/kustomization.yaml"][0]["resources"] == ["certificate.yaml"]
    assert files["default/kustomization.yaml"][0]["resources"][-2:] == [
        "../certmanager",
        "../webhook",
    ]


def test_the_deployment_serves_the_certificates_secret() -> None:
    deployment = _files(HelloWebhookReconciler)["manager/manager.yaml"][1]
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    command = container["command"]
    assert command[command.index("--webhook-port") + 1] == "9443"
    cert_dir = command[command.index("--webhook-cert-dir") + 1]
    assert {"name": "webhook", "containerPort": 9443, "protocol": "TCP"} in container["ports"]
    assert {"name": "cert", "mountPath": cert_dir, "readOnly": True} in container["volumeMounts"]
    assert {"name": "cert", "secret": {"secretName": "hello-webhook-server-cert"}} in pod["volumes"]


def test_a_converting_crd_points_at_the_service() -> None:
    files = _files(BoxReconciler)
    (crd,) = files["crd/bases/boxes.example.com_boxes.yaml"]
    assert crd["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == (
        "hello-system/hello-serving-cert"
    )
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"] == {
        "name": "hello-webhook-service",
        "namespace": "hello-system",
        "path": "/convert",
        "port": 443,
    }
    assert "webhook/manifests.yaml" not in files  # a conversion, no admission webhooks
    assert "webhook/service.yaml" in files


def test_no_webhooks_no_webhook_files() -> None:
    files = _files(HelloReconciler)
    assert not [path for path in files if path.startswith(("webhook/", "certmanager/"))]
    assert (
        "--webhook-port"
        not in files["manager/manager.yaml"][1]["spec"]["template"]["spec"]["containers"][0][
            "command"
        ]
    )
